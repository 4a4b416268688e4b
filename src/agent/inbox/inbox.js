// The agents' inbox: a live queue (Server-Sent Events from /agent/stream), a conversation with what
// the user was offered, countdowns, and the agent's actions over the agents' API on the same server.
// The session is an HttpOnly cookie; the CSRF value comes from the page's meta tag and is sent as a
// header; nothing is kept in the browser's storage. Plain DOM, no inline code (strict CSP).
import { $, BASE, CSRF, call, newKey, state, status, tick } from './inbox-core.js';
import { renderConversation, renderQueue } from './inbox-view.js';

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
    if (state.selected === id) {
      renderConversation(c);
      loadReplies(c.handoff?.queue ?? '');
    }
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
  renderQueue(select);
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
    renderQueue(select);
  });
  $('back').addEventListener('click', () => {
    document.body.classList.remove('reading');
    state.selected = null;
    $('conversation').hidden = true;
    $('placeholder').hidden = false;
    renderQueue(select);
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
    renderQueue(select);
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
