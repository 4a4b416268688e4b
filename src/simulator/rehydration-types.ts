/**
 * The shapes of a rehydration check's steps and runs. A leaf module, so the check and the
 * comparison of its runs can both use them without importing each other.
 */
import type { Message } from '../messages/message.js';
import type { ConversationStatus } from '../store/types.js';
import type { Duration } from './harness-duration.js';
import type { RawEvent } from './transcript-format.js';

/**
 * One step of a rehydration check: a user's event (as the runtime receives it, e.g.
 * `{ type: 'reply.large', id: 'large', title: 'Large', via: 'button' }`), a flow answer (sent with
 * the conversation's flow token), or time passing (`{ advance: '10m' }`, or milliseconds).
 *
 * `reprompts: i` marks an event the bot does not handle in its state (a stale tap, stray text):
 * the runtime re-sends the prompt, which the machine alone knows nothing of, so through the store
 * the step must say what `steps[i]` said there (what the machine alone says is not compared).
 */
export type RehydrationStep = { readonly event: RawEvent; readonly reprompts?: number | undefined } | { readonly flow: Readonly<Record<string, unknown>> } | { readonly advance: Duration };

/** The machine alone, in memory. */
export interface MemoryRun {
  /** What the machine said at each step (through JSON). */
  readonly said: readonly Message[][];
  /** The state value as text after each step (`menu`, `{"ordering":"size"}`). */
  readonly states: readonly string[];
  /** The context after each step, as the machine holds it (not through JSON). */
  readonly contexts: readonly unknown[];
  /** The context at the end, through JSON. */
  readonly context: unknown;
}

/** The real runtime on a SQLite file and the sandbox. */
export interface StoreRun {
  /** What the bot sent at each step (the transcript's messages, through JSON). */
  readonly said: readonly Message[][];
  /** The conversation's state after each step (`null` before it exists). */
  readonly states: readonly (string | null)[];
  /** The stored context after each step. */
  readonly contexts: readonly unknown[];
  /** The last conversation, read from a fresh connection at the end. */
  readonly final: { readonly state: string | null; readonly status: ConversationStatus; readonly context: unknown };
  /** The provider requests the sandbox accepted, flow tokens written `ft_*`. */
  readonly requests: readonly unknown[];
}

/** The three runs of {@link checkRehydration}. */
export interface RehydrationRuns {
  readonly memory: MemoryRun;
  /** Through the store, one runtime for all steps. */
  readonly straight: StoreRun;
  /** Through the store, a new runtime and store connection before every step. */
  readonly restarted: StoreRun;
}
