/**
 * The page's entry module: picks the bot and this tab's user number,
 * follows the live view over Server-Sent Events, and sends what the user types and taps.
 */
import { getJson, post, watch } from './api.js';
import { phone } from './dom.js';
import { renderChat } from './chat.js';
import { openFlow, openList } from './overlays.js';
import { openLiveFlow } from './live-flow.js';
import { renderRequests, renderState } from './panels.js';

const $ = (id) => document.getElementById(id);
const USER_KEY = 'colloquy.simulator.user';
const s = { bots: [], signed: false, bot: null, user: '', view: null, pending: [], sms: false, es: null, chatKey: '', open: new Set(), stick: false, closedFlows: new Map() };

function newUser() {
  return '52155' + String(Math.floor(Math.random() * 1e8)).padStart(8, '0');
}

function valid(user) {
  return typeof user === 'string' && /^[0-9]{6,20}$/.test(user) ? user : null;
}

async function main() {
  const q = new URLSearchParams(location.search);
  const listing = await getJson('/bots');
  s.bots = listing.bots;
  s.signed = listing.signed === true;
  s.user = valid(q.get('user')) || valid(sessionStorage.getItem(USER_KEY)) || newUser();
  s.bot = s.bots.find((b) => b.id === q.get('bot')) || s.bots[0];
  setupToolbar();
  setupComposer();
  connect();
}

function connect() {
  if (s.es) s.es.close();
  sessionStorage.setItem(USER_KEY, s.user);
  const url = new URL(location.href);
  url.searchParams.set('bot', s.bot.id);
  url.searchParams.set('user', s.user);
  history.replaceState(null, '', url);
  s.view = null;
  s.pending = [];
  s.chatKey = '';
  s.open.clear();
  s.closedFlows.clear();
  $('user-number').textContent = phone(s.user);
  $('bot-name').textContent = s.bot.id;
  $('bot-number').textContent = phone(s.bot.number);
  $('avatar').textContent = s.bot.id.slice(0, 1).toUpperCase();
  document.title = s.bot.id + ' \u00b7 ' + phone(s.user) + ' \u00b7 Colloquy simulator';
  render();
  s.es = watch(
    s.bot.id,
    s.user,
    (view) => {
      s.view = view;
      render();
    },
    (live) => {
      $('presence').textContent = live ? 'online' : 'reconnecting\u2026';
    },
  );
}

function render() {
  const view = s.view || { timeline: [], requests: [], conversation: null };
  const seen = new Set(view.timeline.filter((i) => i.kind === 'user').map((i) => i.id));
  s.pending = s.pending.filter((p) => p.id === null || !seen.has(p.id));
  const key = JSON.stringify([view.timeline, s.pending]);
  if (key !== s.chatKey) {
    s.chatKey = key;
    const chat = $('chat');
    const atEnd = chat.scrollHeight - chat.scrollTop - chat.clientHeight < 120;
    renderChat(chat, view.timeline, s.pending, { signed: s.signed, tap, openList: showList, openFlow: showFlow, closedFlows: s.closedFlows });
    if (atEnd || s.stick) chat.scrollTop = chat.scrollHeight;
    s.stick = false;
  }
  renderWindow($('window-state'), view.window);
  renderHandoff($('handoff-state'), view.handoff);
  renderState($('state'), view.conversation);
  renderRequests($('requests'), $('request-count'), view.requests, s.open);
}

/** The user's 24-hour window on the Cloud API (hidden on the seed provider, which has none). */
function renderWindow(el, w) {
  el.hidden = !w;
  if (!w) return;
  el.className = 'window-state ' + (w.open ? 'open' : 'closed');
  el.dataset.open = String(w.open);
  el.textContent = '24-hour window ' + w.text;
}

/** While a person takes over or has the chat: who has it, or that it waits for an agent and when that times out. */
function renderHandoff(el, handoff) {
  el.hidden = !handoff;
  if (!handoff) return;
  el.className = 'handoff-state ' + handoff.state;
  el.dataset.state = handoff.state;
  el.textContent = handoff.text;
}

async function send(path, body, bubble) {
  const temp = bubble ? { id: null, at: Date.now(), ...bubble } : null;
  if (temp) {
    s.pending.push(temp);
    s.stick = true;
    render();
  }
  try {
    const answer = await post(path, { bot: s.bot.id, user: s.user, ...body });
    if (temp) temp.id = answer.id;
  } catch (err) {
    if (temp) s.pending = s.pending.filter((p) => p !== temp);
    toast(String(err.message || err));
    throw err;
  } finally {
    render();
  }
}

function tap(item, kind, choice) {
  const body = { kind, id: choice.id, title: choice.title, context: item.providerId || undefined };
  if (kind === 'list' && choice.description) body.description = choice.description;
  send('/tap', body, { text: choice.title, via: kind }).catch(() => undefined);
}

function showList(item, list) {
  openList($('screen'), list, (row) => tap(item, 'list', row));
}

function showFlow(item, params) {
  if (params.flow_action === 'data_exchange') return showLiveFlow(item, params);
  const form = s.bot.flowForms[params.flow_id];
  openFlow($('screen'), params, form, (data) => send('/flow', { token: params.flow_token, data, context: item.providerId || undefined }, { text: 'Form sent', via: 'flow' }));
}

/** A live flow: its screens come from the bot's Flow endpoint, which the simulator calls as WhatsApp does. */
function showLiveFlow(item, params) {
  const key = { bot: s.bot.id, user: s.user, token: params.flow_token };
  openLiveFlow($('screen'), params, {
    open: () => post('/flow/open', { ...key, flowId: params.flow_id, context: item.providerId || undefined }),
    submit: (values) => post('/flow/submit', { ...key, values }),
    back: () => post('/flow/back', key),
    closed: (message) => {
      s.closedFlows.set(params.flow_token, message);
      s.chatKey = '';
      render();
    },
  });
}

function setupToolbar() {
  const select = $('bot-select');
  if (s.bots.length > 1) {
    select.replaceChildren(
      ...s.bots.map((b) => {
        const o = document.createElement('option');
        o.value = b.id;
        o.textContent = b.id + ' (' + phone(b.number) + ')';
        return o;
      }),
    );
    select.value = s.bot.id;
    select.addEventListener('change', () => {
      s.bot = s.bots.find((b) => b.id === select.value) || s.bots[0];
      connect();
    });
  } else $('bot-picker').hidden = true;
  $('new-user').addEventListener('click', () => {
    s.user = newUser();
    connect();
  });
}

function setupComposer() {
  const input = $('text');
  const mode = $('mode');
  mode.addEventListener('click', () => {
    s.sms = !s.sms;
    mode.textContent = s.sms ? 'SMS' : 'WA';
    mode.setAttribute('aria-pressed', String(s.sms));
    $('composer').classList.toggle('sms', s.sms);
    input.placeholder = s.sms ? 'Text message (SMS)' : 'Message';
    input.focus();
  });
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    send(s.sms ? '/sms' : '/text', { text }, { text, via: s.sms ? 'sms' : 'text' }).catch(() => {
      input.value = text;
    });
  });
}

let toastTimer;
function toast(message) {
  const el = $('toast');
  el.textContent = message;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => {
    el.hidden = true;
  }, 6000);
}

main().catch((err) => toast('The simulator could not start: ' + String(err.message || err)));
