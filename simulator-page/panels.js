/**
 * The panels beside the phone: the conversation's state and
 * context, and the raw requests exchanged with the provider about this user.
 */
import { h, json, clockSeconds } from './dom.js';

export function renderState(el, conv) {
  if (!conv) {
    el.replaceChildren(h('p', { class: 'empty' }, 'No conversation yet: say something to the bot.'));
    return;
  }
  const row = (k, v, cls) => [h('dt', {}, k), h('dd', { class: cls || '' }, v)];
  el.replaceChildren(
    h(
      'div',
      { class: 'state-line' },
      h('span', { class: 'state-label' }, 'state'),
      h('code', { class: 'state-value', id: 'state-value' }, conv.state === null ? '(none)' : conv.state),
      h('span', { class: 'pill status-' + conv.status, id: 'status-value' }, conv.status),
    ),
    h(
      'dl',
      { class: 'facts' },
      row('conversation', '#' + conv.id),
      row('revision', String(conv.version)),
      row('channel', conv.channel),
      row('flow token', conv.flowToken, 'mono'),
      row('updated', clockSeconds(conv.updatedAt)),
    ),
    h('div', { class: 'subhead' }, 'context'),
    h('pre', { class: 'json', id: 'context' }, json(conv.context)),
  );
}

export function renderRequests(el, counter, requests, open) {
  counter.textContent = String(requests.length);
  if (!requests.length) {
    el.replaceChildren(h('li', { class: 'empty' }, 'No provider requests yet.'));
    return;
  }
  el.replaceChildren(
    ...requests
      .slice()
      .reverse()
      .map((r) => {
        const status = r.status === 0 ? '\u2026' : String(r.status);
        const cls = r.status === 0 ? 'wait' : r.status < 300 ? 'ok' : r.status < 500 ? 'warn' : 'bad';
        const details = h(
          'details',
          { class: 'request', dataset: { seq: String(r.seq), endpoint: r.endpoint }, open: open.has(r.seq) },
          h(
            'summary',
            {},
            h('span', { class: 'endpoint ep-' + r.endpoint }, r.endpoint),
            h('span', { class: 'path' }, r.method + ' ' + r.path),
            r.fault ? h('span', { class: 'fault' }, 'fault: ' + r.fault) : null,
            h('span', { class: 'status ' + cls }, status),
            h('time', {}, clockSeconds(r.at)),
          ),
          h('div', { class: 'subhead' }, 'request'),
          h('pre', { class: 'json' }, json(r.body)),
          h('div', { class: 'subhead' }, 'response'),
          h('pre', { class: 'json' }, json(r.response)),
          h('div', { class: 'subhead' }, 'headers'),
          h('pre', { class: 'json' }, json(r.headers)),
        );
        details.addEventListener('toggle', () => (details.open ? open.add(r.seq) : open.delete(r.seq)));
        return h('li', {}, details);
      }),
  );
}
