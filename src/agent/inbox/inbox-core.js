// The inbox's shared parts: the page's values (from its meta tags), the state, DOM helpers, the
// API call (with the session's CSRF header) and the countdowns.
export const $ = (id) => document.getElementById(id);
const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
export const CSRF = meta('colloquy-csrf');
export const BASE = meta('colloquy-base');
export const ME = meta('colloquy-agent');

export const state = {
  queue: [],
  selected: null,
  conversation: null,
  filter: 'all',
  // The server's clock minus the browser's, so countdowns follow the server.
  skew: 0,
  replies: new Map(),
  // One Idempotency-Key per message composed: a second click or a retry sends it once.
  pending: new Map(),
  loading: false,
  reload: false,
  stick: true,
};

export function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

export function status(text, bad = false) {
  const s = $('status');
  s.textContent = text;
  s.className = bad ? 'status bad' : 'status';
}

export function newKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export async function call(method, path, body, headers = {}) {
  const res = await fetch(`${BASE}${path}`, {
    method,
    credentials: 'same-origin',
    headers: { 'X-CSRF-Token': CSRF, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 401) {
    // The session ended (signed out elsewhere, expired, the agent removed): back to the sign-in form.
    window.location.assign(BASE);
    throw new Error('Your session has ended.');
  }
  const text = await res.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new Error(json?.error?.message ?? `HTTP ${res.status}`);
  return json;
}

export function now() {
  return Date.now() + state.skew;
}

function left(deadline) {
  const s = Math.max(0, Math.round((deadline - now()) / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

function ago(at) {
  const s = Math.max(0, Math.round((now() - at) / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
}

/** Every element with a deadline shows the time left, once a second. */
export function tick() {
  for (const e of document.querySelectorAll('[data-deadline]')) {
    const d = Number(e.dataset.deadline);
    e.textContent = `${e.dataset.label} ${left(d)}`;
    e.classList.toggle('urgent', d - now() < 60_000);
  }
  for (const e of document.querySelectorAll('[data-since]')) e.textContent = `${e.dataset.prefix}${ago(Number(e.dataset.since))} ago`;
}

export function deadline(node, label, at) {
  if (at === null || at === undefined) {
    node.hidden = true;
    delete node.dataset.deadline;
    return;
  }
  node.hidden = false;
  node.dataset.deadline = String(at);
  node.dataset.label = label;
  node.textContent = `${label} ${left(at)}`;
}
