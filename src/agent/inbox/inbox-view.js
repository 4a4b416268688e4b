// The inbox's rendering: the queue, and a conversation with what the user was offered, the
// countdowns and the transcript (with internal notes and claims from the handoff log).
import { $, deadline, el, ME, state, tick } from './inbox-core.js';

// ---- the queue ----

function shown() {
  if (state.filter === 'waiting') return state.queue.filter((h) => h.status === 'waiting');
  if (state.filter === 'mine') return state.queue.filter((h) => h.status === 'claimed' && h.agent === ME);
  return state.queue;
}

let shownQueue = '';

export function renderQueue(onSelect) {
  const list = $('queue');
  const items = shown();
  // Rebuilt only when what it shows changed: a rebuild would drop the focus of the item being used.
  const key = JSON.stringify([items, state.selected]);
  $('queue-count').textContent = String(items.length);
  if (key === shownQueue) return;
  shownQueue = key;
  list.replaceChildren();
  if (items.length === 0) list.append(el('li', 'empty', state.filter === 'all' ? 'No conversation is waiting for a person.' : 'Nothing here.'));
  for (const h of items) list.append(queueItem(h, onSelect));
  tick();
}

function queueItem(h, onSelect) {
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
  li.addEventListener('click', () => onSelect(h.conversationId));
  li.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      onSelect(h.conversationId);
    }
  });
  return li;
}

function author(line) {
  if (line.from === 'agent') return line.agent === ME ? 'you' : line.agent;
  return line.from;
}

// ---- the conversation ----

export function renderConversation(c) {
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
