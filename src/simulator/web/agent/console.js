// The agent console: the handoff queue, a conversation, claim, reply, release. It calls the
// agents' HTTP API (/agent/...) on the same server; plain DOM, no inline scripts (strict CSP).
const $ = (id) => document.getElementById(id);
const store = window.localStorage;
const state = { selected: null, queue: [], busy: false, pending: null };

function headers(json) {
  const h = { 'X-Agent': agentName() };
  const token = $('token').value.trim();
  if (token) h.Authorization = `Bearer ${token}`;
  if (json) h['Content-Type'] = 'application/json';
  return h;
}

function agentName() {
  return $('agent').value.trim();
}

async function call(method, path, body, extra = {}) {
  const res = await fetch(path, { method, headers: { ...headers(body !== undefined), ...extra }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new Error(json?.error?.message ?? `HTTP ${res.status}`);
  return json;
}

function note(text, bad = false) {
  const el = $('status');
  el.textContent = text;
  el.className = bad ? 'status bad' : 'status';
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function ago(at) {
  const s = Math.max(0, Math.round((Date.now() - at) / 1000));
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h`;
}

// The queue is polled every second: rebuilding its items each time would detach the one being
// clicked and drop keyboard focus, so it is rebuilt only when what it shows changed.
let shownQueue = '';

function renderQueue() {
  const list = $('queue');
  const key = JSON.stringify([state.queue, state.selected]);
  if (key === shownQueue) {
    for (const meta of list.querySelectorAll('[data-since]')) meta.textContent = meta.dataset.prefix + ago(Number(meta.dataset.since)) + ' ago';
    return;
  }
  shownQueue = key;
  list.replaceChildren();
  $('queue-count').textContent = String(state.queue.length);
  if (state.queue.length === 0) list.append(el('li', 'empty', 'No conversation is waiting for a person.'));
  for (const h of state.queue) {
    const li = el('li', `item ${h.status}${state.selected === h.conversationId ? ' selected' : ''}`);
    li.dataset.conversation = String(h.conversationId);
    li.tabIndex = 0;
    const top = el('div', 'top');
    top.append(el('strong', 'user', `+${h.user}`), el('span', 'badge', h.status === 'claimed' ? `claimed by ${h.agent}` : 'waiting'));
    const meta = el('div', 'meta', `${h.bot}${h.queue ? ` · ${h.queue}` : ''} · ${ago(h.since)} ago`);
    meta.dataset.since = String(h.since);
    meta.dataset.prefix = `${h.bot}${h.queue ? ` · ${h.queue}` : ''} · `;
    li.append(top, meta);
    if (h.reason) li.append(el('div', 'reason', h.reason));
    const last = h.lastMessages.at(-1);
    if (last) li.append(el('div', 'last', `${last.from === 'agent' ? last.agent : last.from}: ${last.text}`));
    li.addEventListener('click', () => select(h.conversationId));
    li.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') select(h.conversationId);
    });
    list.append(li);
  }
}

function renderConversation(c) {
  const pane = $('conversation');
  pane.hidden = false;
  $('conv-title').textContent = `+${c.user} · ${c.bot}`;
  const h = c.handoff;
  $('conv-sub').textContent = h
    ? (h.state === 'claimed' ? `claimed by ${h.agent}` : 'waiting for an agent') + (h.reason ? ` · ${h.reason}` : '')
    : `not handed over (state ${c.state ?? '-'}, ${c.status})`;
  const mine = h?.state === 'claimed' && h.agent === agentName();
  $('claim').disabled = !h || h.state === 'claimed';
  $('release').disabled = !h || (h.state === 'claimed' && !mine);
  $('reply-text').disabled = !mine;
  $('reply-send').disabled = !mine;
  const log = $('transcript');
  const atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  log.replaceChildren();
  for (const line of c.transcript) {
    const who = line.from === 'agent' ? `agent-${line.agent === agentName() ? 'me' : 'other'}` : line.from;
    const row = el('div', `line ${line.direction} ${who}`);
    const bubble = el('div', 'bubble');
    bubble.append(el('div', 'who', line.from === 'agent' ? line.agent : line.from), el('div', 'text', line.text));
    const when = new Date(line.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
    bubble.append(el('div', 'when', line.delivery ? `${when} · ${line.delivery.channel} · ${line.delivery.state}` : when));
    row.append(bubble);
    log.append(row);
  }
  if (atBottom) log.scrollTop = log.scrollHeight;
}

async function refresh() {
  if (state.busy) return;
  state.busy = true;
  try {
    state.queue = (await call('GET', '/agent/handoffs')).handoffs;
    renderQueue();
    if (state.selected !== null) renderConversation(await call('GET', `/agent/conversations/${state.selected}`));
    $('presence').textContent = 'online';
  } catch (err) {
    $('presence').textContent = 'offline';
    note(err.message, true);
  } finally {
    state.busy = false;
  }
}

async function select(id) {
  state.selected = id;
  note('');
  await refresh();
}

async function act(what, fn) {
  if (!agentName()) {
    note('Type your agent name first.', true);
    $('agent').focus();
    return;
  }
  try {
    await fn();
    note(what);
  } catch (err) {
    note(err.message, true);
  }
  await refresh();
}

function init() {
  $('agent').value = store.getItem('colloquy.agent') ?? '';
  $('token').value = window.sessionStorage.getItem('colloquy.agentToken') ?? '';
  $('agent').addEventListener('change', () => {
    store.setItem('colloquy.agent', agentName());
    refresh();
  });
  $('token').addEventListener('change', () => {
    window.sessionStorage.setItem('colloquy.agentToken', $('token').value.trim());
    refresh();
  });
  $('claim').addEventListener('click', () => act('Claimed.', () => call('POST', `/agent/handoffs/${state.selected}/claim`, { agent: agentName() })));
  $('release').addEventListener('click', () =>
    act('Released: the bot takes over again.', async () => {
      const note = $('release-note').value.trim();
      await call('POST', `/agent/handoffs/${state.selected}/release`, note ? { agent: agentName(), note } : { agent: agentName() });
      $('release-note').value = '';
    }),
  );
  $('reply').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('reply-text').value;
    if (!text.trim()) return;
    // One key per message typed: a retry after a network error sends it once.
    if (!state.pending || state.pending.text !== text) state.pending = { text, key: crypto.randomUUID() };
    const { key } = state.pending;
    act('Sent.', async () => {
      await call('POST', `/agent/handoffs/${state.selected}/messages`, { text }, { 'Idempotency-Key': key });
      state.pending = null;
      $('reply-text').value = '';
    });
  });
  refresh();
  setInterval(refresh, 1000);
}

init();
