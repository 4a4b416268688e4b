/**
 * The chat's bubbles: the bot's lists, reply buttons with their
 * image, video or document header, flows, SMS, and on the Cloud API text and template cards,
 * agents' messages under the agent's name, the user's messages with their ticks (on the Cloud
 * API: read receipts), and system lines (a timer, a handoff, the end of a conversation).
 */
import { h, icon, safeUrl, clock, extensionOf } from './dom.js';

// Media headers by message and link, reused across renders so an image is not fetched again
// (nor a playing video reset) each time the chat is rebuilt.
const mediaNodes = new Map();
let mediaUsed = new Set();

export function renderChat(chat, timeline, pending, ctx) {
  mediaUsed = new Set();
  const nodes = [h('div', { class: 'note day' }, dayOf(timeline)), h('div', { class: 'note secure', id: 'webhook-note' }, banner(ctx.signed))];
  let side = null;
  timeline.forEach((item, i) => {
    const node = renderItem(item, side !== sideOf(item), timeline.slice(0, i), ctx);
    side = sideOf(item);
    if (node) nodes.push(node);
  });
  for (const p of pending) {
    nodes.push(userBubble({ text: p.text, via: p.via, at: p.at, state: p.id === null ? 'sending' : 'pending', error: null }, side !== 'out', []));
    side = 'out';
  }
  chat.replaceChildren(...nodes);
  for (const key of mediaNodes.keys()) if (!mediaUsed.has(key)) mediaNodes.delete(key);
}

function banner(signed) {
  return signed
    ? 'Simulated chat: your taps go through the real webhook to the bot, signed with COLLOQUY_WEBHOOK_SECRET.'
    : 'Simulated chat: your taps go through the real webhook to the bot, unsigned (COLLOQUY_WEBHOOK_SECRET is not set).';
}

function dayOf(timeline) {
  const first = timeline[0];
  if (!first) return 'Today';
  const d = new Date(first.at);
  return d.toDateString() === new Date().toDateString() ? 'Today' : d.toLocaleDateString();
}

/** Who a bubble is from: a new sender starts a new group (the bubble with a tail). */
function sideOf(item) {
  if (item.kind === 'bot') return item.agent ? 'agent ' + item.agent : 'in';
  return item.kind === 'user' ? 'out' : 'note';
}

function renderItem(item, tail, before, ctx) {
  if (item.kind === 'note' && item.handoff) return h('div', { class: 'note handoff ' + item.handoff, dataset: { handoff: item.handoff } }, item.text);
  if (item.kind === 'note') return h('div', { class: 'note' }, item.text);
  if (item.kind === 'user') return userBubble(item, tail, before);
  return botBubble(item, tail, ctx);
}

function meta(item, ticks) {
  const parts = [h('span', { class: 'time' }, clock(item.at))];
  if (ticks) parts.push(ticks);
  return h('span', { class: 'meta' }, parts);
}

function userTicks(item) {
  if (item.state === 'sending') return h('span', { class: 'ticks sending', title: 'sending' }, icon('clock'));
  if (item.state === 'failed') return h('span', { class: 'ticks failed', title: item.error || 'failed' }, '!');
  // The Cloud API's read receipts: one grey tick until the bot marks the message read, then two blue ones.
  if (item.read === false) return h('span', { class: 'ticks sent', title: item.toPerson ? item.toPerson + ' (not read yet)' : 'sent (not read yet)' }, '\u2713');
  if (item.read !== true && item.state === 'pending') return h('span', { class: 'ticks', title: 'received by the webhook' }, '\u2713');
  // During a handoff the message went to a person (or the queue), not through the bot.
  if (item.toPerson) return h('span', { class: 'ticks read person', title: item.toPerson }, '\u2713\u2713');
  return h('span', { class: 'ticks read', title: item.read === true ? 'read by the bot' : 'processed by the bot' }, '\u2713\u2713');
}

function userBubble(item, tail, before) {
  const sms = item.via === 'sms';
  const content = [];
  if (sms) content.push(h('span', { class: 'sms-label' }, 'SMS'));
  const quoted = item.via === 'button' || item.via === 'list' || item.via === 'template' ? quoteFor(item.text, before) : null;
  if (quoted) content.push(h('div', { class: 'quote' }, quoted));
  if (item.via === 'flow') {
    content.push(h('div', { class: 'flow-sent' }, h('span', { class: 'flow-icon' }, '\u2714'), ' ', h('span', { class: 'text' }, item.text)));
    const rows = Object.entries(item.data || {}).filter(([k]) => k !== 'flow_token');
    if (rows.length)
      content.push(
        h(
          'dl',
          { class: 'answers' },
          rows.map(([k, v]) => [h('dt', {}, k), h('dd', {}, typeof v === 'string' ? v : JSON.stringify(v))]),
        ),
      );
  } else content.push(h('span', { class: 'text' }, item.text));
  content.push(meta(item, userTicks(item)));
  const cls = 'bubble out' + (tail ? ' tail' : '') + (sms ? ' sms' : '');
  return h('div', { class: 'msg out' }, h('div', { class: cls, dataset: { kind: 'user', via: item.via || 'text' } }, content));
}

function quoteFor(title, before) {
  for (let i = before.length - 1; i >= 0; i--) {
    const it = before[i];
    if (it.kind === 'bot' && it.template && it.template.replies.some((c) => c.title === title)) return 'Template ' + it.template.name;
    const r = it.kind === 'bot' ? bodies(it) : {};
    const rows = r.listMessages ? r.listMessages.sections.flatMap((s) => s.messages) : r.replyButtons ? r.replyButtons.buttons : [];
    if (rows.some((row) => row.title === title)) {
      const body = r.listMessages ? r.listMessages.body : r.replyButtons.body;
      return body.length > 70 ? body.slice(0, 69) + '\u2026' : body;
    }
  }
  return null;
}

function botMeta(item) {
  if (item.state === 'failed') return meta(item, h('span', { class: 'ticks failed', title: item.error || 'failed' }, 'not delivered'));
  if (item.state !== 'sent') return meta(item, h('span', { class: 'ticks sending' }, 'sending\u2026'));
  return meta(item, null);
}

function shell(item, tail, kind, content, below) {
  const cls = 'bubble in' + (tail ? ' tail' : '') + (kind === 'sms' ? ' sms' : '') + (item.state === 'sent' ? '' : ' ' + item.state);
  const data = { kind, outboxId: String(item.id), providerId: item.providerId || '', ...(item.agent && { agent: item.agent }) };
  // As WhatsApp names the sender in a group: an agent's messages carry the agent's name.
  const byline = item.byline ? h('div', { class: 'byline' }, item.byline) : null;
  return h('div', { class: 'msg in' }, h('div', { class: cls + (item.agent ? ' agent' : ''), dataset: data }, byline, content, botMeta(item)), below || null);
}

/** The seed-shaped bodies of a bot item: its request on the seed provider, the message it delivered on the Cloud API. */
function bodies(item) {
  return (item.provider === 'cloud-api' ? item.message : item.request) || {};
}

function botBubble(item, tail, ctx) {
  if (item.channel === 'sms') {
    const label = item.fallbackOf !== null ? 'SMS \u00b7 instead of a WhatsApp message' : 'SMS';
    return shell(item, tail, 'sms', [h('span', { class: 'sms-label' }, label), h('span', { class: 'text' }, item.request?.message || '')]);
  }
  if (item.template) return templateBubble(item, item.template, tail, ctx);
  const r = bodies(item);
  if (item.provider === 'cloud-api' && r.kind === 'text') return shell(item, tail, 'text', [h('span', { class: 'text' }, r.text)]);
  if (r.listMessages) return listBubble(item, r.listMessages, tail, ctx);
  if (r.replyButtons) return buttonsBubble(item, r.replyButtons, tail, ctx);
  if (r.flow) return flowBubble(item, r.flow, tail, ctx);
  return shell(item, tail, 'unknown', [h('pre', { class: 'text' }, JSON.stringify(item.request || {}, null, 2))]);
}

/** A template as a card: its name and language, its parameters, and its quick replies to tap. */
function templateBubble(item, t, tail, ctx) {
  const name = h(
    'div',
    { class: 'template-name' },
    h('span', { class: 'template-badge' }, 'Template'),
    ' ',
    h('span', { class: 'name' }, t.name),
    ' ',
    h('span', { class: 'lang' }, '(' + t.language + ')'),
  );
  // As the user sees it when the sandbox knows the template; else the parameters the message fills in.
  const params = t.body.length
    ? h(
        'ol',
        { class: 'template-params' },
        t.body.map((p) => h('li', {}, p)),
      )
    : null;
  const content = t.seen ? [name, texts(t.seen.header, t.seen.body, t.seen.footer)] : [name, t.header.map((p) => h('div', { class: 'template-header' }, p)), params];
  const replies = t.replies.length
    ? h(
        'div',
        { class: 'reply-buttons' },
        t.replies.map((c) => h('button', { type: 'button', class: 'reply-button quick-reply', dataset: { id: c.id }, onclick: () => ctx.tap(item, 'template', c) }, c.title)),
      )
    : null;
  return shell(item, tail, 'template', content, replies);
}

function texts(header, body, footer) {
  return [header ? h('div', { class: 'header-text' }, header) : null, h('div', { class: 'text' }, body), footer ? h('div', { class: 'footer' }, footer) : null];
}

function listBubble(item, list, tail, ctx) {
  const open = h('button', { type: 'button', class: 'action list-open', onclick: () => ctx.openList(item, list) }, icon('list', 'action-icon'), list.buttonText);
  return shell(item, tail, 'list', [texts(list.headerText, list.body, list.footer), h('div', { class: 'actions' }, open)]);
}

function buttonsBubble(item, rb, tail, ctx) {
  const media = mediaOf(item, rb);
  const buttons = h(
    'div',
    { class: 'reply-buttons' },
    rb.buttons.map((b) => h('button', { type: 'button', class: 'reply-button', dataset: { id: b.id }, onclick: () => ctx.tap(item, 'button', b) }, b.title)),
  );
  return shell(item, tail, 'buttons', [media, texts(undefined, rb.body, rb.footer)], buttons);
}

function flowBubble(item, flow, tail, ctx) {
  const p = flow.action.parameters;
  // After a 427 WhatsApp shows the endpoint's message and disables the button.
  const closed = ctx.closedFlows?.get(p.flow_token);
  const cta = h('button', { type: 'button', class: 'action flow-open', disabled: closed !== undefined, title: closed, onclick: () => ctx.openFlow(item, p) }, icon('form', 'action-icon'), p.flow_cta);
  const note = closed !== undefined ? h('div', { class: 'flow-closed-note' }, closed) : null;
  return shell(item, tail, 'flow', [texts(undefined, flow.body, undefined), note, h('div', { class: 'actions' }, cta)]);
}

function mediaOf(item, rb) {
  const header = rb.headerImage || rb.headerVideo || rb.headerDocument;
  if (!header) return null;
  const key = item.id + ' ' + JSON.stringify(header);
  mediaUsed.add(key);
  let node = mediaNodes.get(key);
  if (!node) {
    node = rb.headerImage ? image(rb.headerImage.link) : rb.headerVideo ? video(rb.headerVideo.link) : documentCard(rb.headerDocument);
    mediaNodes.set(key, node);
  }
  return node;
}

function image(link) {
  const url = safeUrl(link);
  const box = h('div', { class: 'media image' });
  const missing = () => box.replaceChildren(h('div', { class: 'media-missing' }, icon('image', 'media-icon'), h('span', {}, 'Image'), h('small', {}, link)));
  if (!url) missing();
  else box.append(h('img', { src: url, alt: 'Image header', referrerpolicy: 'no-referrer', onerror: missing }));
  return box;
}

function video(link) {
  const url = safeUrl(link);
  return h(
    'div',
    { class: 'media video' },
    url ? h('video', { src: url, controls: true, preload: 'none', playsinline: true }) : null,
    h('a', { class: 'video-link', href: url || '#', target: '_blank', rel: 'noopener noreferrer' }, icon('play', 'play-icon'), fileOf(link)),
  );
}

function documentCard(doc) {
  const url = safeUrl(doc.link);
  return h(
    'a',
    { class: 'media document', href: url || '#', target: '_blank', rel: 'noopener noreferrer', title: doc.link },
    h('span', { class: 'doc-badge' }, extensionOf(doc.fileName)),
    h('span', { class: 'doc-text' }, h('span', { class: 'doc-name' }, doc.fileName), h('small', {}, extensionOf(doc.fileName) + ' \u00b7 document')),
  );
}

function fileOf(link) {
  return String(link).split(/[?#]/)[0].split('/').pop() || 'video';
}
