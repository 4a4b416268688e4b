/**
 * A live flow (`flow_action: "data_exchange"`) on the phone: each screen comes from the bot's Flow
 * endpoint, which the simulator's server side calls as WhatsApp does. The screen shows its title,
 * its data's plain values, an error the endpoint put on it, and its fields (a select's choices from
 * the screen's data); the back arrow returns to the previous screen; a 427 shows its message and
 * disables the flow's button; SUCCESS closes the flow (its answer then reaches the bot).
 */
import { h } from './dom.js';
import { head, overlay } from './overlays.js';

/**
 * Opens the flow of `params` over `screen`. `calls` reaches the simulator's API: `open()`,
 * `submit(values)`, `back()` each resolve to `{ step }`; `closed(message)` is told of a 427.
 */
export function openLiveFlow(screen, params, calls) {
  let root;
  let close;
  let busy = false;
  const render = (step) => root.replaceChildren(...view(step));
  const controls = (disabled) => root.querySelectorAll('button, select, input').forEach((el) => (el.disabled = disabled));
  // An error that leaves the phone on its screen (a refused value, an endpoint that failed): said there, to try again.
  const stay = (message) => {
    const error = root.querySelector('.flow-body[data-screen] .flow-error');
    if (!error) return false;
    controls(false);
    error.textContent = message;
    return true;
  };
  const run = (action) => {
    if (busy) return;
    busy = true;
    controls(true);
    action()
      .then(({ step }) => {
        busy = false;
        if (step.kind === 'complete') return close();
        if (step.kind === 'closed') calls.closed(step.message);
        if (step.kind !== 'failed' || !stay(step.message)) render(step);
      })
      .catch((err) => {
        busy = false;
        if (!stay(String(err.message || err))) render({ kind: 'failed', message: String(err.message || err) });
      });
  };

  function view(step) {
    if (step.kind === 'closed') {
      return [
        head(params.flow_cta, close),
        h('div', { class: 'flow-body' }, h('div', { class: 'flow-closed', role: 'alert' }, step.message)),
        h('div', { class: 'flow-foot' }, h('button', { type: 'button', class: 'flow-submit', onclick: () => close() }, 'OK')),
      ];
    }
    if (step.kind === 'failed') {
      return [head(params.flow_cta, close), h('div', { class: 'flow-body' }, h('div', { class: 'flow-error', role: 'alert' }, step.message))];
    }
    const inputs = step.fields.map((f) => ({ f, input: inputFor(f) }));
    const top = head(step.title, close);
    if (step.canGoBack) top.prepend(h('button', { type: 'button', class: 'icon back', 'aria-label': 'Back', onclick: () => run(calls.back) }, '\u2190'));
    return [
      top,
      h(
        'div',
        { class: 'flow-body', dataset: { screen: step.screen } },
        h('div', { class: 'flow-meta' }, 'Flow ' + params.flow_id + ' \u00b7 screen ' + step.screen + ' \u00b7 live'),
        step.values.length
          ? h(
              'dl',
              { class: 'flow-values' },
              step.values.map((v) => [h('dt', {}, v.name), h('dd', { dataset: { name: v.name } }, v.text)]),
            )
          : null,
        inputs.map(({ f, input }) => h('label', { class: 'field' }, h('span', { class: 'field-label' }, f.label + (f.required ? ' *' : '')), input)),
        step.declared ? null : h('div', { class: 'flow-meta' }, 'No form is declared for this screen (flowForms): it is submitted with its data.'),
        h('div', { class: 'flow-error', role: 'alert' }, step.error || ''),
      ),
      h('div', { class: 'flow-foot' }, h('button', { type: 'submit', class: 'flow-submit' }, 'Continue'), h('small', {}, 'Managed by the business. Live data from its Flow endpoint.')),
    ];
  }

  overlay(screen, 'flow-screen live-flow', params.flow_cta, (done) => {
    close = done;
    root = h('form', {
      class: 'flow-form',
      onsubmit: (e) => {
        e.preventDefault();
        if (!root.reportValidity()) return;
        const values = {};
        for (const el of root.querySelectorAll('[data-field]')) {
          if (el.type === 'checkbox') values[el.dataset.field] = el.checked;
          else if (el.value !== '') values[el.dataset.field] = el.type === 'number' ? Number(el.value) : el.value;
        }
        run(() => calls.submit(values));
      },
    });
    root.append(head(params.flow_cta, done), h('div', { class: 'flow-body' }, h('div', { class: 'flow-meta' }, 'Opening\u2026')));
    return root;
  });
  run(calls.open);
}

function inputFor(f) {
  const common = { name: f.name, id: 'field-' + f.name, required: f.required && f.type !== 'boolean', dataset: { field: f.name } };
  if (f.choices) {
    return h(
      'select',
      common,
      h('option', { value: '' }, 'Choose\u2026'),
      f.choices.map((c) => h('option', { value: c.id }, c.title)),
    );
  }
  if (f.type === 'boolean') return h('input', { ...common, type: 'checkbox' });
  return h('input', { ...common, type: f.type === 'number' ? 'number' : f.type === 'date' ? 'date' : 'text' });
}
