/**
 * The phone's overlays: the bottom sheet a list opens, and the
 * screen a flow opens, built from the bot's `flowForms` or else from the flow's payload data plus
 * a free key/value editor.
 */
import { h } from './dom.js';

export function overlay(screen, cls, label, content) {
  const close = () => {
    node.remove();
    document.removeEventListener('keydown', onKey);
  };
  const onKey = (e) => {
    if (e.key === 'Escape') close();
  };
  const node = h(
    'div',
    { class: 'overlay ' + cls },
    h('div', { class: 'scrim', onclick: () => close() }),
    h(
      'div',
      { class: 'sheet', role: 'dialog', 'aria-modal': 'true', 'aria-label': label },
      content(() => close()),
    ),
  );
  screen.querySelectorAll('.overlay').forEach((o) => o.remove());
  document.addEventListener('keydown', onKey);
  screen.append(node);
  return close;
}

export function head(title, close) {
  return h('div', { class: 'sheet-head' }, h('button', { type: 'button', class: 'icon close', 'aria-label': 'Close', onclick: close }, '\u2715'), h('div', { class: 'sheet-title' }, title));
}

/** The list's sheet: tapping a row selects it (as WhatsApp does); the Send button sends it. */
export function openList(screen, list, onSend) {
  overlay(screen, 'list-sheet', list.buttonText, (close) => {
    let chosen = null;
    const options = [];
    const send = h(
      'button',
      {
        type: 'button',
        class: 'list-send',
        'aria-label': 'Send',
        title: 'Send',
        disabled: true,
        onclick: () => {
          if (chosen) {
            close();
            onSend(chosen);
          }
        },
      },
      '\u27a4',
    );
    const pick = (row, el) => {
      chosen = row;
      for (const o of options) {
        o.classList.toggle('selected', o === el);
        o.setAttribute('aria-checked', String(o === el));
      }
      send.disabled = false;
    };
    const option = (row) => {
      const el = h(
        'button',
        { type: 'button', class: 'row-option', role: 'radio', 'aria-checked': 'false', dataset: { id: row.id }, onclick: () => pick(row, el) },
        h('span', { class: 'row-text' }, h('span', { class: 'row-title' }, row.title), row.description ? h('span', { class: 'row-desc' }, row.description) : null),
        h('span', { class: 'radio', 'aria-hidden': 'true' }),
      );
      options.push(el);
      return el;
    };
    return [
      head(list.buttonText, close),
      h(
        'div',
        { class: 'sheet-body', role: 'radiogroup', 'aria-label': list.buttonText },
        list.sections.map((s) => h('div', { class: 'section' }, s.title ? h('div', { class: 'section-title' }, s.title) : null, s.messages.map(option))),
      ),
      h('div', { class: 'sheet-foot' }, h('span', { class: 'sheet-hint' }, 'Tap an option, then send'), send),
    ];
  });
}

export function openFlow(screen, params, form, onSubmit) {
  const payload = params.flow_action_payload || {};
  const specs = form ? form.fields.map((f) => ({ ...f, type: f.type || 'text' })) : fieldsFromData(payload.data || {});
  const inputs = specs.map((f) => ({ spec: f, input: inputOf(f) }));
  const extra = form ? null : keyValueEditor();
  const error = h('div', { class: 'flow-error', role: 'alert' });
  const title = (form && form.title) || payload.screen || params.flow_cta;
  overlay(screen, 'flow-screen', title, (close) => {
    const submit = h('button', { type: 'submit', class: 'flow-submit' }, 'Submit');
    const el = h(
      'form',
      {
        class: 'flow-form',
        onsubmit: (e) => {
          e.preventDefault();
          if (!el.reportValidity()) return;
          submit.disabled = true;
          error.textContent = '';
          const data = collect(inputs, extra);
          Promise.resolve(onSubmit(data)).then(
            () => close(),
            (err) => {
              error.textContent = String(err.message || err);
              submit.disabled = false;
            },
          );
        },
      },
      head(title, close),
      h(
        'div',
        { class: 'flow-body' },
        h('div', { class: 'flow-meta' }, 'Flow ' + params.flow_id + (payload.screen ? ' \u00b7 screen ' + payload.screen : '')),
        inputs.map(({ spec, input }) => field(spec, input)),
        extra ? extra.node : null,
        error,
      ),
      h('div', { class: 'flow-foot' }, submit, h('small', {}, 'Managed by the business. Simulated by Colloquy.')),
    );
    return el;
  });
  const first = screen.querySelector('.flow-form input, .flow-form select');
  if (first) first.focus();
}

function fieldsFromData(data) {
  return Object.entries(data).map(([name, value]) => ({ name, label: name, value, type: typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'text' }));
}

function inputOf(f) {
  const common = { name: f.name, id: 'field-' + f.name, required: f.required === true && f.type !== 'boolean' };
  if (f.type === 'select') {
    return h(
      'select',
      common,
      h('option', { value: '' }, 'Choose\u2026'),
      (f.options || []).map((o) => h('option', { value: o }, o)),
    );
  }
  if (f.type === 'boolean') return h('input', { ...common, type: 'checkbox', checked: f.value === true });
  const type = f.type === 'number' ? 'number' : f.type === 'date' ? 'date' : 'text';
  const value = f.value === undefined || f.value === null ? undefined : typeof f.value === 'object' ? JSON.stringify(f.value) : String(f.value);
  return h('input', { ...common, type, step: type === 'number' ? 'any' : undefined, value });
}

function field(spec, input) {
  const label = (spec.label || spec.name) + (spec.required ? ' *' : '');
  if (spec.type === 'boolean') return h('label', { class: 'field check' }, input, h('span', {}, label));
  return h('label', { class: 'field' }, h('span', { class: 'field-label' }, label), input);
}

function keyValueEditor() {
  const rows = h('div', { class: 'kv-rows' });
  const add = () => {
    const row = h(
      'div',
      { class: 'kv-row' },
      h('input', { class: 'kv-key', placeholder: 'field', 'aria-label': 'Field name' }),
      h('input', { class: 'kv-value', placeholder: 'value', 'aria-label': 'Field value' }),
      h('button', { type: 'button', class: 'icon', 'aria-label': 'Remove field', onclick: () => row.remove() }, '\u2715'),
    );
    rows.append(row);
  };
  add();
  const node = h(
    'div',
    { class: 'kv' },
    h('div', { class: 'field-label' }, 'More answers (no form declared for this flow)'),
    rows,
    h('button', { type: 'button', class: 'kv-add', onclick: add }, '+ Add field'),
  );
  return { node, rows };
}

function collect(inputs, extra) {
  const data = {};
  for (const { spec, input } of inputs) {
    if (spec.type === 'boolean') data[spec.name] = input.checked;
    else if (input.value === '') continue;
    else if (spec.type === 'number') data[spec.name] = Number(input.value);
    else data[spec.name] = input.value;
  }
  if (extra)
    for (const row of extra.rows.querySelectorAll('.kv-row')) {
      const key = row.querySelector('.kv-key').value.trim();
      if (key) data[key] = row.querySelector('.kv-value').value;
    }
  return data;
}
