/**
 * A bot: an id, an XState v5 machine, and options. A bot module exports one, made with
 * {@link defineBot}.
 */
import type { AnyStateMachine, ContextFrom, SnapshotFrom } from 'xstate';
import { BotError } from '../errors.js';
import type { Message, TemplateMessage } from '../messages/message.js';
import { INCOMPATIBLE_POLICIES, pathExists, validateMigrations, validateMigrationTargets, type BotMigration, type IncompatiblePolicy } from './versions.js';

export type { BotMigration, IncompatiblePolicy } from './versions.js';
import type { FallbackInfo } from './fallback-info.js';
import { flowScreensProblems, type FlowScreens } from './flow-screens.js';

/** What to do with input the current state does not handle (a stale tap, stray text). */
export type UnhandledPolicy =
  | 'reprompt'
  | 'ignore'
  | ((info: { readonly event: { readonly type: string }; readonly state: string; readonly context: unknown }) => Message | readonly Message[] | undefined);

/** When a failed interactive message goes out by SMS instead (see the SMS fallback docs). */
export interface FallbackPolicy {
  /** Off: a failed message is reported to the bot as `delivery.failed`, nothing more. Default on. */
  readonly enabled?: boolean | undefined;
  /** Provider codes of a permanent failure that fall back (default `'any-permanent'`: every permanent failure, 131047 and 131026 among them). */
  readonly codes?: readonly (string | number)[] | 'any-permanent' | undefined;
  /** Fall back when retries are exhausted (default true). */
  readonly onRetriesExhausted?: boolean | undefined;
  /** Fall back on a `failed` delivery status (default true). */
  readonly onFailedStatus?: boolean | undefined;
  /** The longest SMS, in segments, before the text is shortened (default 3). */
  readonly maxSegments?: number | undefined;
  /** A custom decision; when given, it alone decides (the switches above are not consulted). */
  readonly shouldFallBack?: ((info: FallbackInfo) => boolean) | undefined;
}

/** What happens to a free-form message that would go out after the 24-hour window closed. */
export type WindowAction =
  /** Send this template instead (a function gets the message and its state, and may pick one). */
  | { readonly template: TemplateMessage | ((info: WindowInfo) => TemplateMessage) }
  /** Do not send it: the machine gets `send.failed` with reason `window` and routes it. */
  | 'event'
  /** Send it by SMS (the SMS fallback), as a failed interactive message would go. */
  | 'sms';

/** What a window policy's template function is told. */
export interface WindowInfo {
  readonly botId: string;
  readonly user: string;
  /** The state that said the message (`booking.confirm`). */
  readonly state: string;
  readonly message: Message;
  /** When the user last wrote on WhatsApp (ms since the epoch), if ever. */
  readonly lastUserMessageAt: number | undefined;
}

/**
 * The bot's 24-hour window policy (providers that keep the window: the Cloud API). Per state:
 * the emitting state's entry wins, then its parents' (`booking` covers `booking.confirm`), then
 * `closed`.
 */
export interface WindowPolicy {
  readonly closed: WindowAction;
  readonly states?: Readonly<Record<string, WindowAction>> | undefined;
}

/** When a user's message is marked read (with the typing indicator): once it is stored (`on-accept`, the default), once its turn ran (`on-handled`), or never. */
export type ReadReceiptPolicy = 'on-accept' | 'on-handled' | 'off';

/** A field of a flow's form, as the simulators show it (the real form lives in the provider's portal). */
export interface FlowField {
  readonly name: string;
  readonly label?: string | undefined;
  readonly type?: 'text' | 'number' | 'date' | 'select' | 'boolean' | undefined;
  /** The choices of a `select`. */
  readonly options?: readonly string[] | undefined;
  /**
   * A live flow's `select` whose choices come from the screen's data: the name of a list of
   * `{ id, title }` in it (`slots`); the field's value is the chosen `id`.
   */
  readonly optionsFrom?: string | undefined;
  readonly required?: boolean | undefined;
}

/** One screen of a live flow, as the simulators show it. */
export interface FlowScreenForm {
  readonly title?: string | undefined;
  /** What the user fills in; the screen's submit sends these with the screen data's plain values (text, numbers). */
  readonly fields: readonly FlowField[];
}

/**
 * How the simulators show a flow (the real form, its Flow JSON, lives in the provider's portal): a
 * navigate flow's one form (`fields`), or a live flow's screens by name.
 */
export interface FlowForm {
  readonly title?: string | undefined;
  readonly fields?: readonly FlowField[] | undefined;
  /** A live flow's (`data_exchange`) screens, by the names its answers use. */
  readonly screens?: Readonly<Record<string, FlowScreenForm>> | undefined;
}

/** Options of a bot. */
export interface BotOptions<TMachine extends AnyStateMachine = AnyStateMachine> {
  /** The number the bot sends from (default: the configured sender). Inbound routing uses it. */
  readonly sender?: string | undefined;
  /** The Cloud API `phone_number_id` this bot sends from (default: the numbers file's, else the one the user last wrote to). */
  readonly phoneNumberId?: string | undefined;
  /** What to do with a free-form message once the user's 24-hour window closed (Cloud API); see {@link WindowPolicy}. */
  readonly window?: WindowPolicy | undefined;
  /** When users' messages are marked read with a typing indicator (default `'on-accept'`; needs a provider with read receipts). */
  readonly readReceipts?: ReadReceiptPolicy | undefined;
  /** Idle time after which a conversation expires and the next message starts a new one (ms; default 24 h). */
  readonly expireAfterMs?: number | undefined;
  /** Unhandled input: re-send the current prompt (default), ignore it, or answer with messages. */
  readonly onUnhandled?: UnhandledPolicy | undefined;
  /** SMS fallback policy. */
  readonly fallback?: FallbackPolicy | undefined;
  /** The `tag` of this bot's SMS (default: the bot's id). */
  readonly smsTag?: string | undefined;
  /** Input for a new conversation's machine (default `{ user, botId }`). */
  readonly input?: ((key: { readonly botId: string; readonly user: string }) => unknown) | undefined;
  /** Sample context for `colloquy check` and `colloquy graph` (default: the machine's own). */
  readonly sampleContext?: Record<string, unknown> | undefined;
  /**
   * How the states that send a live flow (`action: 'data_exchange'`) answer its screens through the
   * Flow endpoint, keyed by the state's path (`booking.pick`; a parent's entry covers its children).
   */
  readonly flows?: Readonly<Record<string, FlowScreens<ContextFrom<TMachine>>>> | undefined;
  /** Forms the simulators show for this bot's flows, by `flow_id`. */
  readonly flowForms?: Readonly<Record<string, FlowForm>> | undefined;
  /** How long a handoff waits for an agent to claim it before `handoff.timeout` (ms; default 10 minutes). */
  readonly handoffTimeoutMs?: number | undefined;
  /** Called after every committed turn (for logs or analytics); must not throw. */
  readonly onTurn?: ((info: { readonly user: string; readonly snapshot: SnapshotFrom<TMachine> }) => void) | undefined;
}

/** A bot definition. */
export interface Bot<TMachine extends AnyStateMachine = AnyStateMachine> {
  readonly id: string;
  /** The bot's version, a positive integer (1 unless given). Each conversation records the version it runs on. */
  readonly version: number;
  readonly machine: TMachine;
  readonly options: BotOptions<TMachine>;
  /** How a conversation of an older version is brought to this one, by the version each step leads to. */
  readonly migrations: Readonly<Record<number, BotMigration>>;
  /** What happens to a conversation whose state exists neither in this version nor via a migration. */
  readonly onIncompatible: IncompatiblePolicy;
  readonly [BOT]: true;
}

const BOT = Symbol.for('colloquy.bot');

/** The default idle expiry: 24 hours, WhatsApp's customer-service window. */
export const DEFAULT_EXPIRE_AFTER_MS = 24 * 60 * 60 * 1000;

/** What {@link defineBot} takes. */
export interface BotDefinition<TMachine extends AnyStateMachine = AnyStateMachine> {
  readonly id: string;
  /** A positive integer (default 1). Bump it when the machine changes in a way running conversations notice. */
  readonly version?: number | undefined;
  readonly machine: TMachine;
  readonly options?: BotOptions<TMachine> | undefined;
  /**
   * The steps from older versions, keyed by the version each one leads to: step `2` brings a
   * version-1 conversation to version 2. Steps run in order up to this bot's version.
   */
  readonly migrations?: Readonly<Record<number, BotMigration>> | undefined;
  /** What happens to a conversation whose state exists neither here nor via a migration (default `'restart'`). */
  readonly onIncompatible?: IncompatiblePolicy | undefined;
}

/**
 * Defines a bot.
 *
 * @example
 * export default defineBot({ id: 'pizza', machine, options: { expireAfterMs: 3_600_000 } });
 * export default defineBot({ id: 'pizza', version: 2, machine, migrations: { 2: { states: { 'ordering.size': 'ordering.pickSize' } } } });
 */
export function defineBot<TMachine extends AnyStateMachine>(def: BotDefinition<TMachine>): Bot<TMachine> {
  if (typeof def.id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/i.test(def.id)) {
    throw new BotError(`Bot id ${JSON.stringify(def.id)} must be 1–64 letters, digits, "-" or "_"`, { bot: String(def.id) });
  }
  if (!def.machine || typeof (def.machine as { transition?: unknown }).transition !== 'function') {
    throw new BotError(`Bot "${def.id}": machine must be an XState v5 machine (from setup().createMachine())`, { bot: def.id });
  }
  if (def.options?.sender !== undefined && !/^[0-9]{6,20}$/.test(def.options.sender)) {
    throw new BotError(`Bot "${def.id}": sender must be digits only`, { bot: def.id });
  }
  if (def.options?.phoneNumberId !== undefined && !/^[0-9]{1,32}$/.test(def.options.phoneNumberId)) {
    throw new BotError(`Bot "${def.id}": phoneNumberId must be the Cloud API's phone_number_id, digits only`, { bot: def.id });
  }
  const receipts = def.options?.readReceipts;
  if (receipts !== undefined && !['on-accept', 'on-handled', 'off'].includes(receipts)) {
    throw new BotError(`Bot "${def.id}": readReceipts must be 'on-accept', 'on-handled' or 'off', not ${JSON.stringify(receipts)}`, { bot: def.id });
  }
  validateWindow(def.id, def.options?.window);
  validateFlows(def.id, def.machine, def.options?.flows as Readonly<Record<string, FlowScreens<never>>> | undefined);
  const timeout = def.options?.handoffTimeoutMs;
  if (timeout !== undefined && (!Number.isInteger(timeout) || timeout < 1)) throw new BotError(`Bot "${def.id}": handoffTimeoutMs must be a positive whole number of milliseconds`, { bot: def.id });
  const version = def.version ?? 1;
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new BotError(`Bot "${def.id}": version must be a positive integer, not ${JSON.stringify(def.version)}`, { bot: def.id });
  }
  const onIncompatible = def.onIncompatible ?? 'restart';
  if (!INCOMPATIBLE_POLICIES.includes(onIncompatible)) {
    throw new BotError(`Bot "${def.id}": onIncompatible must be one of ${INCOMPATIBLE_POLICIES.map((p) => `'${p}'`).join(', ')}, not ${JSON.stringify(def.onIncompatible)}`, { bot: def.id });
  }
  const migrations = validateMigrations(def.id, version, def.migrations ?? {});
  validateMigrationTargets(def.id, version, def.machine, migrations);
  return { id: def.id, version, machine: def.machine, options: def.options ?? {}, migrations, onIncompatible, [BOT]: true };
}

/** True for a value made by {@link defineBot} (in any copy of this package). */
export function isBot(v: unknown): v is Bot {
  return typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[BOT] === true;
}

function validateWindow(bot: string, w: WindowPolicy | undefined): void {
  if (w === undefined) return;
  const check = (a: unknown, where: string): void => {
    if (a === 'event' || a === 'sms') return;
    const t = typeof a === 'object' && a !== null ? (a as { template?: unknown }).template : undefined;
    if (typeof t === 'function' || (typeof t === 'object' && t !== null && (t as { kind?: unknown }).kind === 'template')) return;
    throw new BotError(`Bot "${bot}": ${where} must be 'event', 'sms' or { template: template({...}) }, not ${JSON.stringify(a)}`, { bot });
  };
  if (typeof w !== 'object' || w === null) throw new BotError(`Bot "${bot}": window must be { closed: ..., states?: {...} }`, { bot });
  check(w.closed, 'window.closed');
  for (const [state, a] of Object.entries(w.states ?? {})) check(a, `window.states["${state}"]`);
}

function validateFlows(bot: string, machine: AnyStateMachine, flows: Readonly<Record<string, FlowScreens<never>>> | undefined): void {
  if (flows === undefined) return;
  const problems = flowScreensProblems(flows);
  for (const state of typeof flows === 'object' && flows !== null ? Object.keys(flows) : []) {
    if (!pathExists(machine, state.split('.'))) problems.push(`flows["${state}"]: the machine has no state "${state}"`);
  }
  if (problems.length) throw new BotError(`Bot "${bot}": ${problems.join('; ')}`, { bot });
}
