// The agents' inbox: a live queue (Server-Sent Events from /agent/stream), a conversation with what
// the user was offered, countdowns, and the agent's actions over the agents' API on the same server.
// The session is an HttpOnly cookie; the CSRF value comes from the page's meta tag and is sent as a
// header; nothing is kept in the browser's storage. Plain DOM, no inline code (strict CSP).
const $ = (id) => document.getElementById(id);
const meta = (name) => document.querySelector(`meta[name="${name}"]`)?.getAttribute('content') ?? '';
const CSRF = meta('colloquy-csrf');
const BASE = meta('colloquy-base');
const ME = meta('colloquy-agent');

const state = {
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

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function status(text, bad = false) {
  const s = $('status');
  s.textContent = text;
  s.className = bad ? 'status bad' : 'status';
}

function newKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

async function call(method, path, body, headers = {}) {
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

function now() {
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
function tick() {
  for (const e of document.querySelectorAll('[data-deadline]')) {
    const d = Number(e.dataset.deadline);
    e.textContent = `${e.dataset.label} ${left(d)}`;
    e.classList.toggle('urgent', d - now() < 60_000);
  }
  for (const e of document.querySelectorAll('[data-since]')) e.textContent = `${e.dataset.prefix}${ago(Number(e.dataset.since))} ago`;
}

function deadline(node, label, at) {
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

// ---- the queue ----

function shown() {
  if (state.filter === 'waiting') return state.queue.filter((h) => h.status === 'waiting');
  if (state.filter === 'mine') return state.queue.filter((h) => h.status === 'claimed' && h.agent === ME);
  return state.queue;
}

let shownQueue = '';

function renderQueue() {
  const list = $('queue');
  const items = shown();
  // Rebuilt only when what it shows changed: a rebuild would drop the focus of the item being used.
  const key = JSON.stringify([items, state.selected]);
  $('queue-count').textContent = String(items.length);
  if (key === shownQueue) return;
  shownQueue = key;
  list.replaceChildren();
  if (items.length === 0) list.append(el('li', 'empty', state.filter === 'all' ? 'No conversation is waiting for a person.' : 'Nothing here.'));
  for (const h of items) list.append(queueItem(h));
  tick();
}

function queueItem(h) {
  const li = el('li', `item ${h.status}${h.agent === ME ? ' mine' : ''}${state.selected === h.conversationId ? ' selected' : ''}`);
  li.dataset.conversation = String(h.conversationId);
  li.tabIndex = 0;
  li.setAttribute('role', 'button');
  const top = el('div', 'top');
  top.append(el('strong', 'user', `+${h.user}`), el('span', 'badge', h.status === 'claimed' ? (h.agent === ME ? 'yours' : `claimed by ${h.agent}`) : 'waiting'));
  li.append(top);
  const prefix = `${h.bot}${h.queue ? ` · ${h.queue}` : ''} · `;
  const since = el('div', 'meta', prefix);
  since.dataset.since = String(h.since);
  since.dataset.prefix = prefix;
  li.append(since);
  if (h.reason) li.append(el('div', 'reason', h.reason));
  const last = h.lastMessages.at(-1);
  if (last) li.append(el('div', 'last', `${author(last)}: ${last.text}`));
  const [label, at] = h.status === 'waiting' ? ['times out in', h.timeoutAt] : ['back to the queue if idle in', h.claimIdleUntil];
  if (at) {
    const c = el('div', 'clock');
    deadline(c, label, at);
    li.append(c);
  }
  li.addEventListener('click', () => select(h.conversationId));
  li.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      select(h.conversationId);
    }
  });
  return li;
}

function author(line) {
  if (line.from === 'agent') return line.agent === ME ? 'you' : line.agent;
  return line.from;
}

// ---- the conversation ----

function renderConversation(c) {
  state.conversation = c;
  state.skew = c.now - Date.now();
  $('placeholder').hidden = true;
  $('conversation').hidden = false;
  document.body.classList.add('reading');
  $('conv-title').textContent = `+${c.user}`;
  const h = c.handoff;
  const where = [c.bot, h?.queue].filter(Boolean).join(' · ');
  $('conv-sub').textContent = h
    ? `${where} · ${h.state === 'claimed' ? (h.agent === ME ? 'you have it' : `${h.agent} has it`) : 'waiting for an agent'}${h.reason ? ` · ${h.reason}` : ''}`
    : `${where} · not with a person (${c.status})`;
  deadline($('timeout-left'), 'times out in', h && h.state === 'waiting' ? h.timeoutAt : null);
  deadline($('idle-left'), 'back to the queue if idle in', h && h.state === 'claimed' ? (h.claimIdleUntil ?? null) : null);
  const mine = h?.state === 'claimed' && h.agent === ME;
  $('claim').hidden = !h || mine;
  $('claim').disabled = !h || h.state === 'claimed';
  $('claim').textContent = h?.state === 'claimed' ? `${h.agent} has it` : 'Claim';
  for (const id of ['reply-send', 'reply-text', 'canned', 'choice-send']) $(id).disabled = !mine;
  $('note-add').disabled = !h;
  $('release').disabled = !h || (h.state === 'claimed' && !mine);
  renderOffered(c.offered);
  renderTranscript(c);
  loadReplies(h?.queue ?? '');
  tick();
}

function renderOffered(o) {
  const box = $('offered');
  box.replaceChildren();
  box.hidden = !o;
  if (!o) return;
  const head = el('div', 'offered-head');
  head.append(el('strong', undefined, 'Last offered'), el('span', 'muted', ` by ${o.from === 'agent' ? o.agent : 'the bot'} · ${o.kind === 'list' ? 'list' : 'buttons'}: ${o.body}`));
  const choices = el('ul', 'choices');
  for (const ch of o.choices) {
    const tapped = o.tapped?.id === ch.id;
    const li = el('li', tapped ? 'choice tapped' : 'choice', ch.title);
    li.dataset.id = ch.id;
    if (ch.description) li.title = ch.description;
    if (tapped) li.append(el('span', 'mark', ' ✓ tapped'));
    choices.append(li);
  }
  const answer = el('div', 'answer', o.tapped ? `The user tapped “${o.tapped.title}”${o.tapped.via === 'sms' ? ' (by SMS)' : ''}.` : 'The user has not tapped any of these.');
  box.append(head, choices, answer);
}

function renderTranscript(c) {
  const log = $('transcript');
  log.replaceChildren();
  const notes = (c.log ?? []).filter((e) => e.action === 'note' || e.action === 'claim' || e.action === 'claim_expired');
  const items = [...c.transcript.map((line) => ({ at: line.at, line })), ...notes.map((entry) => ({ at: entry.at, entry }))].sort((a, b) => a.at - b.at);
  for (const item of items) log.append(item.line ? lineOf(item.line) : entryOf(item.entry));
  // Follows the newest line unless the agent scrolled up to read.
  if (state.stick) log.scrollTop = log.scrollHeight;
}

function lineOf(line) {
  const who = line.from === 'agent' ? (line.agent === ME ? 'agent me' : 'agent') : line.from;
  const row = el('div', `line ${line.direction} ${who}`);
  const bubble = el('div', 'bubble');
  bubble.append(el('div', 'who', line.from === 'agent' ? line.agent : line.from === 'user' ? 'user' : line.from), el('div', 'text', line.text));
  const options = choicesOfRaw(line.raw);
  if (options.length) {
    const ul = el('ul', 'inline-choices');
    for (const o of options) ul.append(el('li', undefined, o));
    bubble.append(ul);
  }
  const when = new Date(line.at).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  bubble.append(el('div', 'when', line.delivery ? `${when} · ${line.delivery.channel} · ${line.delivery.state}` : when));
  row.append(bubble);
  return row;
}

function choicesOfRaw(m) {
  if (m?.kind === 'list') return m.listMessages.sections.flatMap((s) => s.messages.map((r) => r.title));
  if (m?.kind === 'buttons') return m.replyButtons.buttons.map((b) => b.title);
  return [];
}

function entryOf(e) {
  if (e.action === 'note') {
    const row = el('div', 'line note');
    const bubble = el('div', 'bubble');
    bubble.append(el('div', 'who', `internal note · ${e.agent ?? 'system'}`), el('div', 'text', e.text ?? ''));
    row.append(bubble);
    return row;
  }
  const text = e.action === 'claim' ? `${e.agent === ME ? 'you' : e.agent} claimed the conversation` : `${e.agent ?? 'the agent'}'s claim ended (${e.text ?? 'idle'})`;
  const row = el('div', 'line system');
  row.append(el('div', 'bubble', text));
  return row;
}

async function loadReplies(queue) {
  if (!state.replies.has(queue)) {
    state.replies.set(queue, []);
    try {
      const q = queue ? `?queue=${encodeURIComponent(queue)}` : '';
      state.replies.set(queue, (await call('GET', `/replies${q}`)).replies);
    } catch (err) {
      state.replies.delete(queue);
      status(err.message, true);
      return;
    }
  }
  const select = $('canned');
  const want = JSON.stringify(state.replies.get(queue));
  if (select.dataset.shown === want) return;
  select.dataset.shown = want;
  select.replaceChildren(new Option(state.replies.get(queue).length ? 'Canned replies…' : 'No canned replies', ''));
  state.replies.get(queue).forEach((r, i) => select.append(new Option(r.title, String(i))));
}

async function refreshConversation() {
  if (state.selected === null) return;
  if (state.loading) {
    state.reload = true;
    return;
  }
  state.loading = true;
  try {
    const id = state.selected;
    const c = await call('GET', `/conversations/${id}`);
    if (state.selected === id) renderConversation(c);
  } catch (err) {
    status(err.message, true);
  } finally {
    state.loading = false;
    if (state.reload) {
      state.reload = false;
      refreshConversation();
    }
  }
}

function select(id) {
  if (state.selected !== id) {
    $('transcript').replaceChildren();
    state.stick = true;
    status('');
  }
  state.selected = id;
  renderQueue();
  refreshConversation();
}

// ---- actions ----

async function act(button, done, fn) {
  button.disabled = true;
  try {
    await fn();
    status(done);
  } catch (err) {
    status(err.message, true);
  } finally {
    button.disabled = false;
    await refreshConversation();
  }
}

/** Sends a message once: the same composition keeps its key until it is accepted. */
async function sendMessage(body, button, clear) {
  const id = state.selected;
  const what = JSON.stringify([id, body]);
  if (state.pending.get(what)?.sending) return;
  const p = state.pending.get(what) ?? { key: newKey(), sending: false };
  p.sending = true;
  state.pending.set(what, p);
  await act(button, 'Sent.', async () => {
    try {
      await call('POST', `/handoffs/${id}/messages`, body, { 'Idempotency-Key': p.key });
      state.pending.delete(what);
      clear();
    } finally {
      p.sending = false;
    }
  });
}

function choicesBody() {
  const kind = $('choice-kind').value;
  const titles = $('choice-options')
    .value.split('\n')
    .map((t) => t.trim())
    .filter(Boolean);
  const used = new Set();
  const ids = titles.map((t, i) => {
    let id = `agent_${
      t
        .toLowerCase()
        .replace(/[^a-z0-9]+/g, '_')
        .replace(/^_|_$/g, '')
        .slice(0, 40) || i + 1
    }`;
    while (used.has(id)) id = `${id}_${i + 1}`;
    used.add(id);
    return id;
  });
  const body = $('choice-body').value.trim();
  if (kind === 'buttons') return { message: { kind, body, buttons: titles.map((title, i) => ({ id: ids[i], title })) } };
  return { message: { kind, body, button: $('choice-button').value.trim() || 'Choose', rows: titles.map((title, i) => ({ id: ids[i], title })) } };
}

function showTab(name) {
  for (const t of document.querySelectorAll('[data-tab]')) t.setAttribute('aria-selected', String(t.dataset.tab === name));
  for (const p of document.querySelectorAll('[data-panel]')) p.hidden = p.dataset.panel !== name;
}

function wire() {
  $('transcript').addEventListener('scroll', () => {
    const log = $('transcript');
    state.stick = log.scrollHeight - log.scrollTop - log.clientHeight < 40;
  });
  $('queue-filter').addEventListener('change', () => {
    state.filter = $('queue-filter').value;
    renderQueue();
  });
  $('back').addEventListener('click', () => {
    document.body.classList.remove('reading');
    state.selected = null;
    $('conversation').hidden = true;
    $('placeholder').hidden = false;
    renderQueue();
  });
  for (const t of document.querySelectorAll('[data-tab]')) t.addEventListener('click', () => showTab(t.dataset.tab));
  $('claim').addEventListener('click', () => act($('claim'), 'Claimed: the conversation is yours.', () => call('POST', `/handoffs/${state.selected}/claim`, {})));
  $('canned').addEventListener('change', () => {
    const r = state.replies.get(state.conversation?.handoff?.queue ?? '')?.[Number($('canned').value)];
    if (r && $('canned').value !== '') {
      $('reply-text').value = r.text;
      $('reply-text').focus();
    }
    $('canned').value = '';
  });
  $('reply').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('reply-text').value;
    if (!text.trim()) return;
    sendMessage({ text }, $('reply-send'), () => {
      if ($('reply-text').value === text) $('reply-text').value = '';
    });
  });
  $('reply-text').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      $('reply').requestSubmit();
    }
  });
  $('choice-kind').addEventListener('change', () => {
    $('choice-button').hidden = $('choice-kind').value !== 'list';
  });
  $('choices').addEventListener('submit', (e) => {
    e.preventDefault();
    sendMessage(choicesBody(), $('choice-send'), () => {
      $('choice-body').value = '';
      $('choice-options').value = '';
    });
  });
  $('note').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = $('note-text').value.trim();
    if (!text) return;
    act($('note-add'), 'Note added (only agents see it).', async () => {
      await call('POST', `/handoffs/${state.selected}/notes`, { text });
      $('note-text').value = '';
    });
  });
  $('release-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const note = $('release-note').value.trim();
    act($('release'), 'Released: the bot takes over again.', async () => {
      await call('POST', `/handoffs/${state.selected}/release`, note ? { note } : {});
      $('release-note').value = '';
    });
  });
  $('sign-out-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    try {
      await fetch(`${BASE}/session/end`, { method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': CSRF } });
    } finally {
      window.location.assign(BASE);
    }
  });
}

// ---- the live queue ----

function listen() {
  const source = new EventSource(`${BASE}/stream`);
  source.addEventListener('open', () => {
    $('presence').textContent = 'live';
    $('presence').className = 'presence live';
  });
  source.addEventListener('queue', (e) => {
    const data = JSON.parse(e.data);
    state.skew = data.now - Date.now();
    state.queue = data.handoffs;
    renderQueue();
    refreshConversation();
  });
  source.addEventListener('error', () => {
    $('presence').textContent = 'reconnecting…';
    $('presence').className = 'presence';
    // A refused stream is not retried by the browser: find out whether the session ended.
    if (source.readyState === EventSource.CLOSED) {
      call('GET', '/me')
        .then(() => setTimeout(listen, 2000))
        .catch(() => undefined);
    }
  });
}

wire();
listen();
setInterval(tick, 1000);
