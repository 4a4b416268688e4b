/**
 * What the page shows for one user and one bot: the chat, the conversation's state and context,
 * and the provider requests about this user. Rebuilt from the store and the sandbox each time.
 */
import type { Sandbox } from '../../sandbox/api.js';
import type { RecordedRequest } from '../../sandbox/types.js';
import type { ConversationRecord, Store } from '../../store/types.js';
import type { BotInfo } from './bots.js';
import { timelineOf, type ChatItem } from './timeline.js';

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

/** Everything the page renders for one user and one bot. */
export interface View {
  readonly bot: string;
  readonly user: string;
  /** The active conversation, or else the latest one; null before the first. */
  readonly conversation: ConversationView | null;
  readonly timeline: readonly ChatItem[];
  readonly requests: readonly RequestView[];
}

/** How many requests the panel keeps, newest last. */
const MAX_REQUESTS = 100;

/** Builds the view of `user` talking to `bot`. */
export async function buildView(store: Store, sandbox: Sandbox, bot: BotInfo, user: string): Promise<View> {
  const conversations = (await store.conversations({ botId: bot.id, user })).sort((a, b) => a.id - b.id);
  const current = (await store.activeConversation({ botId: bot.id, user })) ?? conversations.at(-1);
  return {
    bot: bot.id,
    user,
    conversation: current ? conversationView(current) : null,
    timeline: await timelineOf(store, conversations),
    requests: requestsAbout(sandbox.requests, bot, user).slice(-MAX_REQUESTS).map(requestView),
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
 * user, SMS to the user with the bot's tag, and every token request (tokens are shared by all).
 */
export function requestsAbout(requests: readonly RecordedRequest[], bot: BotInfo, user: string): RecordedRequest[] {
  return requests.filter((r) => {
    if (r.endpoint === 'token') return true;
    const body = (typeof r.body === 'object' && r.body !== null ? r.body : {}) as Record<string, unknown>;
    if (r.endpoint === 'messaging') return body['to'] === user && body['from'] === bot.number;
    const to = Array.isArray(body['msisdns']) ? (body['msisdns'] as unknown[]) : [];
    return to.includes(user) && (body['tag'] === undefined || body['tag'] === bot.smsTag);
  });
}

/** The users a request is about (none for a token request, which is about everybody). */
export function usersOf(r: RecordedRequest): string[] {
  const body = (typeof r.body === 'object' && r.body !== null ? r.body : {}) as Record<string, unknown>;
  if (r.endpoint === 'messaging') return typeof body['to'] === 'string' ? [body['to']] : [];
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
