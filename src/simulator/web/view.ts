/**
 * What the page shows for one user and one bot: the chat, the conversation's state and context,
 * whether a person holds it, and the provider requests about this user. Rebuilt from the store and
 * the sandbox each time.
 */
import type { Sandbox } from '../../sandbox/api.js';
import type { AcceptedCloud, RecordedRequest } from '../../sandbox/types.js';
import type { ConversationRecord, Store } from '../../store/types.js';
import { readsOf, renderedTemplate, usesCloudApi, windowOf, windowText } from '../cloud-sandbox.js';
import { cloudTypeOf } from '../harness-cloud.js';
import type { BotInfo } from './bots.js';
import { handoffView, type HandoffView } from './handoff-view.js';
import { timelineOf, type ChatItem, type RowRenderer } from './timeline.js';

/** The conversation panel. */
export interface ConversationView {
  readonly id: number;
  /** The state as `expectState` writes it: a dotted path (`ordering.menu`), parallel regions joined by `, `. */
  readonly state: string | null;
  readonly status: ConversationRecord['status'];
  readonly version: number;
  readonly channel: ConversationRecord['channel'];
  readonly flowToken: string;
  /** The machine's context, from the persisted snapshot. */
  readonly context: unknown;
  readonly updatedAt: number;
}

/** One provider request, as the raw requests panel shows it. */
export interface RequestView {
  readonly seq: number;
  readonly endpoint: RecordedRequest['endpoint'];
  readonly method: string;
  readonly path: string;
  /** 0 while the request is being answered. */
  readonly status: number;
  readonly fault: string | null;
  readonly at: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly response: unknown;
}

/** The user's 24-hour window (Cloud API), as the chat's header shows it. */
export interface WindowView {
  readonly open: boolean;
  readonly lastUserMessageAt: number | null;
  readonly closesAt: number | null;
  /** For people: `open: closes in 3h 12m`, `closed: only templates reach the user`. */
  readonly text: string;
}

/** Everything the page renders for one user and one bot. */
export interface View {
  readonly bot: string;
  readonly user: string;
  /** The provider the sandbox plays for this bot: `cloud-api` once it has seen Cloud API traffic, else `seed`. */
  readonly provider: 'seed' | 'cloud-api';
  /** The user's 24-hour window on the Cloud API; null on the seed provider. */
  readonly window: WindowView | null;
  /** The active conversation, or else the latest one; null before the first. */
  readonly conversation: ConversationView | null;
  /** The active conversation's open handoff (a person takes over, or has it), as the banner over the chat shows it; null when the bot has the chat. */
  readonly handoff: HandoffView | null;
  readonly timeline: readonly ChatItem[];
  readonly requests: readonly RequestView[];
}

/** How many requests the panel keeps, newest last. */
const MAX_REQUESTS = 100;

/**
 * Builds the view of `user` talking to `bot`; `now` dates the window's countdown (the sandbox's
 * clock), `runtimeNow` the handoff's (the runtime's clock, which fires its timeout).
 */
export async function buildView(store: Store, sandbox: Sandbox, bot: BotInfo, user: string, now = Date.now(), runtimeNow = now): Promise<View> {
  const conversations = (await store.conversations({ botId: bot.id, user })).sort((a, b) => a.id - b.id);
  const current = (await store.activeConversation({ botId: bot.id, user })) ?? conversations.at(-1);
  const cloud = usesCloudApi(sandbox);
  const read = cloud ? new Set(readsOf(sandbox, user).map((r) => r.messageId)) : undefined;
  const w = cloud ? windowOf(sandbox, user, bot.phoneNumberId ?? bot.number) : undefined;
  const open = current?.status === 'active' ? await store.openHandoff(current.id) : undefined;
  return {
    bot: bot.id,
    user,
    provider: cloud ? 'cloud-api' : 'seed',
    window: w === undefined ? null : { open: w.open, lastUserMessageAt: w.lastUserMessageAt ?? null, closesAt: w.closesAt ?? null, text: windowText(w, now) },
    conversation: current ? conversationView(current) : null,
    handoff: handoffView(open, runtimeNow),
    timeline: await timelineOf(store, conversations, read, cloud ? rowRenderer(sandbox) : undefined),
    requests: requestsAbout(sandbox.requests, bot, user, read).slice(-MAX_REQUESTS).map(requestView),
  };
}

/** Fills a template row from the template the sandbox knows: through the message it accepted, or the row's body. */
function rowRenderer(sandbox: Sandbox): RowRenderer {
  return (row) => {
    const accepted = sandbox.messages.find((m): m is AcceptedCloud => m.channel === 'cloud-api' && m.providerId === row.providerId);
    const request = row.request as AcceptedCloud['request'];
    return renderedTemplate(
      sandbox,
      accepted ?? { seq: 0, channel: 'cloud-api', numberId: '', from: '', to: row.user, type: cloudTypeOf(request), request, providerId: row.providerId ?? '', at: row.createdAt },
    );
  };
}

function conversationView(c: ConversationRecord): ConversationView {
  const snapshot = c.snapshot as { context?: unknown } | null;
  return {
    id: c.id,
    state: c.state === null ? null : dottedState(c.state),
    status: c.status,
    version: c.version,
    channel: c.channel,
    flowToken: c.flowToken,
    context: snapshot?.context ?? null,
    updatedAt: c.updatedAt,
  };
}

/** A stored state value (`menu`, or JSON such as `{"ordering":"menu"}`) as dotted leaf paths. */
export function dottedState(state: string): string {
  let value: unknown;
  try {
    value = state.startsWith('{') ? JSON.parse(state) : state;
  } catch {
    return state;
  }
  const leaves: string[] = [];
  const walk = (v: unknown, prefix: string): void => {
    if (typeof v === 'string') leaves.push(prefix ? `${prefix}.${v}` : v);
    else if (typeof v === 'object' && v !== null) {
      const entries = Object.entries(v);
      if (entries.length === 0 && prefix) leaves.push(prefix);
      for (const [k, child] of entries) walk(child, prefix ? `${prefix}.${k}` : k);
    }
  };
  walk(value, '');
  return leaves.length ? leaves.join(', ') : state;
}

/**
 * The requests that concern this user and bot: interactive messages from the bot's number to the
 * user, Cloud API messages to the user and read receipts of the user's messages (`read`: their
 * ids), SMS to the user with the bot's tag, and every token request (tokens are shared by all).
 */
export function requestsAbout(requests: readonly RecordedRequest[], bot: BotInfo, user: string, read?: ReadonlySet<string>): RecordedRequest[] {
  return requests.filter((r) => {
    if (r.endpoint === 'token') return true;
    const body = (typeof r.body === 'object' && r.body !== null ? r.body : {}) as Record<string, unknown>;
    if (r.endpoint === 'cloud-api') return body['to'] === user || (typeof body['message_id'] === 'string' && read?.has(body['message_id']) === true);
    if (r.endpoint === 'messaging') return body['to'] === user && body['from'] === bot.number;
    const to = Array.isArray(body['msisdns']) ? (body['msisdns'] as unknown[]) : [];
    return to.includes(user) && (body['tag'] === undefined || body['tag'] === bot.smsTag);
  });
}

/** The users a request is about (none for a token request, which is about everybody). */
export function usersOf(r: RecordedRequest): string[] {
  const body = (typeof r.body === 'object' && r.body !== null ? r.body : {}) as Record<string, unknown>;
  if (r.endpoint === 'messaging' || r.endpoint === 'cloud-api') return typeof body['to'] === 'string' ? [body['to']] : [];
  if (r.endpoint === 'sms') return Array.isArray(body['msisdns']) ? body['msisdns'].filter((n): n is string => typeof n === 'string') : [];
  return [];
}

function requestView(r: RecordedRequest): RequestView {
  return {
    seq: r.seq,
    endpoint: r.endpoint,
    method: r.method,
    path: r.path,
    status: r.status,
    fault: r.fault ?? null,
    at: r.at,
    headers: r.headers,
    body: r.body,
    response: r.response,
  };
}
