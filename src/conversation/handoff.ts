/**
 * `handoff()`: the action a state uses to hand the conversation to a person. Like `say()` it is
 * XState's own `emit`: the runtime listens for the event and commits the handoff together with the
 * turn's snapshot, so a handoff is opened exactly once. From then on the user's messages go to the
 * agents, not to the machine, until the machine receives `handoff.ended` (an agent released it) or
 * `handoff.timeout` (no agent claimed it in time).
 */
import { emit, type ActionArgs, type ActionFunction, type EventObject, type MachineContext, type ParameterizedObject } from 'xstate';

/** The event `handoff()` emits; the runtime and `colloquy check` listen for it. */
export const HANDOFF_EVENT = 'colloquy.handoff';

/** The default time an unclaimed handoff waits before `handoff.timeout`: 10 minutes. */
export const DEFAULT_HANDOFF_TIMEOUT_MS = 10 * 60 * 1000;

/** What a handoff is about, for the agents' queue. */
export interface HandoffOptions {
  /** Why the conversation is handed over (shown to agents; ≤ 500 characters). */
  readonly reason?: string | undefined;
  /** The queue (team) it goes to (≤ 64 characters). */
  readonly queue?: string | undefined;
  /** How long it waits for an agent to claim it (ms; default: the bot's `handoffTimeoutMs`, else 10 minutes). */
  readonly timeoutMs?: number | undefined;
}

/** What `handoff()` emits: the options, or the error their function threw. */
export type HandoffRequestEvent = { readonly type: typeof HANDOFF_EVENT; readonly options: HandoffOptions } | { readonly type: typeof HANDOFF_EVENT; readonly error: unknown };

/** Options, or a function of the machine's context and event that returns them. */
export type HandoffInput<TContext extends MachineContext, TExpressionEvent extends EventObject, TParams, TEvent extends EventObject> =
  | HandoffOptions
  | ((args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) => HandoffOptions);

/**
 * Hands the conversation to a person, from an entry, exit or transition action. The state should
 * handle `handoff.ended` and `handoff.timeout` (`colloquy check` reports one that handles neither).
 *
 * @example
 * waiting: {
 *   entry: [say(text('A person will take over in a moment.')), handoff(({ context }) => ({ reason: context.issue, queue: 'billing' }))],
 *   on: { 'handoff.ended': 'anythingElse', 'handoff.timeout': 'callback' },
 * }
 */
export function handoff<TContext extends MachineContext, TExpressionEvent extends EventObject, TParams extends ParameterizedObject['params'] | undefined, TEvent extends EventObject>(
  input: HandoffInput<TContext, TExpressionEvent, TParams, TEvent> = {},
): ActionFunction<TContext, TExpressionEvent, TEvent, TParams, never, never, never, never, HandoffRequestEvent> {
  return emit<TContext, TExpressionEvent, TParams, TEvent, HandoffRequestEvent>((args, params): HandoffRequestEvent => {
    try {
      return { type: HANDOFF_EVENT, options: typeof input === 'function' ? input(args, params) : input };
    } catch (error) {
      return { type: HANDOFF_EVENT, error };
    }
  });
}

/** Checks a handoff's options; returns the problem, naming the field, or undefined. */
export function handoffProblem(o: HandoffOptions): string | undefined {
  if (typeof o !== 'object' || o === null) return 'handoff() options must be an object';
  if (o.reason !== undefined && (typeof o.reason !== 'string' || o.reason.length > 500)) return 'reason must be a string of at most 500 characters';
  if (o.queue !== undefined && (typeof o.queue !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/.test(o.queue))) return 'queue must be 1–64 letters, digits, spaces, "_", "-" or "."';
  if (o.timeoutMs !== undefined && (!Number.isInteger(o.timeoutMs) || o.timeoutMs < 1 || o.timeoutMs > 30 * 24 * 3_600_000))
    return 'timeoutMs must be a whole number of milliseconds from 1 to 30 days';
  return undefined;
}
