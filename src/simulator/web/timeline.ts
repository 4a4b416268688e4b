/**
 * The chat as a phone shows it, from the store's transcripts: the user's messages (inbox rows)
 * and the bot's and agents' (outbox rows), in commit order, with system lines where a handoff
 * moved, across every conversation of one user with one bot.
 */
import { choicesOf, type Choice, type Message } from '../../messages/message.js';
import type { ConversationRecord, OutboxRecord, Store, TranscriptEntry } from '../../store/types.js';
import type { RenderedTemplate } from '../cloud-sandbox.js';
import { deliveredMessage, isCloudBody, templateParameters } from '../harness-cloud.js';
import { agentByline, heldText, type HandoffMoment } from '../handoff-words.js';
import { withHandoffs } from './handoff-view.js';

/** Something the user sent. */
export interface UserItem {
  readonly kind: 'user';
  /** The provider's message id (the inbox dedupe key). */
  readonly id: string;
  readonly at: number;
  readonly source: string;
  /** The text to show: what was typed, the title tapped, or a summary. */
  readonly text: string;
  /** `button`, `list`, `flow`, `sms`, `text` or the unsupported message type. */
  readonly via: string;
  /** A completed flow's answers. */
  readonly data?: Readonly<Record<string, unknown>> | undefined;
  readonly state: string;
  readonly error: string | null;
  /**
   * On the Cloud API, for a WhatsApp message: whether the bot marked it read (blue ticks); absent
   * on the seed provider, which has no read receipts (the ticks then say whether the bot processed it).
   */
  readonly read?: boolean | undefined;
  /**
   * Written while a person had the chat or was about to (a handoff): where it went instead of to
   * the bot, for people (`went to ana, who has this chat`).
   */
  readonly toPerson?: string | undefined;
}

/** A template as its card shows it. */
export interface TemplateView {
  readonly name: string;
  readonly language: string;
  /** The header's parameter as text, if any. */
  readonly header: readonly string[];
  /** The body's parameters as texts, in order. */
  readonly body: readonly string[];
  /** As the user sees it, when the sandbox knows the template: its header text, body and footer filled in. */
  readonly seen?: { readonly header?: string | undefined; readonly body: string; readonly footer?: string | undefined } | undefined;
  /** The quick replies: id = the payload a tap sends; title = the button's text (the payload when the sandbox does not know the template). */
  readonly replies: readonly Choice[];
}

/** Fills a template row's message from the template the sandbox knows; undefined when it knows none. */
export type RowRenderer = (row: OutboxRecord) => RenderedTemplate | undefined;

/** Something the bot or an agent sent (or tried to). */
export interface BotItem {
  readonly kind: 'bot';
  /** The outbox row id. */
  readonly id: number;
  readonly at: number;
  readonly channel: OutboxRecord['channel'];
  /** The message kind: list, buttons, flow, template, text, sms. */
  readonly messageKind: string;
  /** The provider request body: the seed's shapes, the Cloud API's, or the SMS body. */
  readonly request: unknown;
  /** Whose shapes `request` has: the seed provider's (and every SMS), or the Cloud API's. */
  readonly provider: 'seed' | 'cloud-api';
  /** On the Cloud API: what the bubble shows (text, template, or list, buttons and flow in the seed's shapes). */
  readonly message?: Message | undefined;
  /** On the Cloud API, for a template: what its card shows. */
  readonly template?: TemplateView | undefined;
  readonly state: OutboxRecord['state'];
  readonly providerId: string | null;
  readonly deliveryStatus: string | null;
  readonly error: string | null;
  readonly fallbackOf: number | null;
  /** An agent's message: the agent's name. */
  readonly agent?: string | undefined;
  /** An agent's message: whose it is, as the bubble shows it (`ana (agent)`, `ana (agent, by SMS)`). */
  readonly byline?: string | undefined;
}

/** A line between bubbles: a timer fired, a conversation ended, a handoff moved (never an agents' internal note). */
export interface NoteItem {
  readonly kind: 'note';
  readonly at: number;
  readonly text: string;
  /** On a handoff's line: which moment it marks (a person takes over, an agent claims it, how it ended). */
  readonly handoff?: HandoffMoment | undefined;
}

/** One line of the chat. */
export type ChatItem = UserItem | BotItem | NoteItem;

/** How many of a user's past conversations with a bot the chat goes back. */
const MAX_CONVERSATIONS = 20;

/**
 * The chat of one user with one bot, oldest first. `read` (on the Cloud API) holds the ids of the
 * user's messages the bot marked read; without it the user's messages carry no read mark.
 */
export async function timelineOf(store: Store, conversations: readonly ConversationRecord[], read?: ReadonlySet<string>, render?: RowRenderer): Promise<ChatItem[]> {
  const items: ChatItem[] = [];
  for (const conv of conversations.slice(-MAX_CONVERSATIONS)) {
    const entries = await store.transcript(conv.id);
    const own = entries.map((entry) => itemOf(entry, read, render));
    const log = await store.handoffLog(conv.id);
    items.push(...withHandoffs(entries, own, await store.handoffs(conv.id), log, heldBy));
    if (conv.status !== 'active') items.push({ kind: 'note', at: conv.endedAt ?? conv.updatedAt, text: `conversation ${conv.status}` });
  }
  return items;
}

/** A user's message written during a handoff says who it went to. */
function heldBy(item: ChatItem, holder: string | null): ChatItem {
  return item.kind === 'user' ? { ...item, toPerson: heldText(holder) } : item;
}

function itemOf(entry: TranscriptEntry, read: ReadonlySet<string> | undefined, render: RowRenderer | undefined): ChatItem | undefined {
  if (entry.direction === 'out') return botItem(entry.record, render);
  const event = (entry.event ?? {}) as { readonly type?: unknown; readonly [k: string]: unknown };
  const type = typeof event.type === 'string' ? event.type : 'unknown';
  // The handoff's own line says it timed out.
  if (entry.source === 'timer' && type === 'handoff.timeout') return undefined;
  if (entry.source === 'timer') return { kind: 'note', at: entry.at, text: `timer fired (${type})` };
  if (entry.source === 'delivery' || type === 'delivery.failed') {
    return { kind: 'note', at: entry.at, text: `delivery failed: ${String(event['reason'] ?? 'unknown reason')}` };
  }
  if (entry.source === 'internal') return undefined;
  return userItem(entry, type, event, read);
}

function userItem(entry: Extract<TranscriptEntry, { direction: 'in' }>, type: string, event: Readonly<Record<string, unknown>>, read: ReadonlySet<string> | undefined): UserItem {
  const marked = read !== undefined && entry.source === 'whatsapp' ? { read: read.has(entry.providerId) } : {};
  const base = { kind: 'user' as const, id: entry.providerId, at: entry.at, source: entry.source, state: entry.state, error: entry.error, ...marked };
  if (type === 'text') return { ...base, text: String(event['text'] ?? ''), via: entry.source === 'sms' ? 'sms' : 'text' };
  if (type.startsWith('reply.')) return { ...base, text: String(event['title'] ?? event['id'] ?? ''), via: String(event['via'] ?? 'button') };
  if (type === 'flow') {
    const data = typeof event['data'] === 'object' && event['data'] !== null ? (event['data'] as Record<string, unknown>) : {};
    return { ...base, text: 'Form sent', via: 'flow', data };
  }
  const what = type === 'unsupported' ? String(event['messageType'] ?? 'message') : type;
  return { ...base, text: `[${what}]`, via: what };
}

function botItem(r: OutboxRecord, render: RowRenderer | undefined): BotItem {
  return { ...botBase(r), ...(r.channel !== 'sms' && isCloudBody(r.request) ? cloudShown(r, r.request, render) : { provider: 'seed' as const }) };
}

/** What a Cloud API bubble shows; a body the page cannot read is shown raw, as an unknown message is. */
function cloudShown(r: OutboxRecord, body: Readonly<Record<string, unknown>>, render: RowRenderer | undefined): Pick<BotItem, 'provider' | 'message' | 'template'> {
  let message: Message;
  try {
    message = deliveredMessage(r.message, body);
  } catch {
    return { provider: 'cloud-api' };
  }
  if (message.kind !== 'template') return { provider: 'cloud-api', message };
  const t = message.template;
  const params = templateParameters(t);
  const shown = render?.(r);
  const seen = shown && { ...(shown.header?.type === 'text' && { header: shown.header.text }), body: shown.body, ...(shown.footer !== undefined && { footer: shown.footer }) };
  const replies = shown ? shown.buttons.map((b) => ({ id: b.payload, title: b.text })) : choicesOf(message);
  return { provider: 'cloud-api', message, template: { name: t.name, language: t.language.code, header: params.header, body: params.body, ...(seen && { seen }), replies } };
}

function botBase(r: OutboxRecord): Omit<BotItem, 'provider' | 'message' | 'template'> {
  return {
    kind: 'bot',
    id: r.id,
    at: r.createdAt,
    channel: r.channel,
    messageKind: r.kind,
    request: r.request,
    state: r.state,
    providerId: r.providerId,
    deliveryStatus: r.deliveryStatus,
    error: r.error,
    fallbackOf: r.fallbackOf,
    ...(typeof r.agent === 'string' && { agent: r.agent, byline: agentByline(r.agent, r.channel === 'sms') }),
  };
}
