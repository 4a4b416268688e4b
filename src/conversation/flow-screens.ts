/**
 * How a state answers the screens of a live WhatsApp Flow (`flow_action: "data_exchange"`): the
 * Flow endpoint asks for each screen's data while the user fills the form in, and the state that
 * sent the flow declares the answers as plain functions of the conversation's context and the
 * screen's data. A bot lists them in `options.flows`, keyed by that state's path.
 */
import type { EventObject } from 'xstate';
import { statePaths } from './state-paths.js';

/** The first screen, the next one, or the same one again with data. */
export interface FlowScreenAnswer {
  readonly kind: 'screen';
  readonly screen: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** The flow is done: WhatsApp closes it and sends the `nfm_reply` with these params. */
export interface FlowCompleteAnswer {
  readonly kind: 'complete';
  readonly params: Readonly<Record<string, unknown>>;
}

/** Stay on the screen the request came from and show a message on it (`data.error_message`). */
export interface FlowErrorAnswer {
  readonly kind: 'error';
  readonly message: string;
  readonly data?: Readonly<Record<string, unknown>> | undefined;
}

/** What a screen's handler answers: build it with {@link flowScreen}, {@link flowComplete} or {@link flowError}. */
export type FlowAnswer = FlowScreenAnswer | FlowCompleteAnswer | FlowErrorAnswer;

/** Show `screen` with `data` (the fields its Flow JSON declares under `data`). */
export function flowScreen(screen: string, data: Readonly<Record<string, unknown>> = {}): FlowScreenAnswer {
  return { kind: 'screen', screen, data };
}

/** Close the flow; `params` travel back in the `nfm_reply` (the flow token is added). */
export function flowComplete(params: Readonly<Record<string, unknown>> = {}): FlowCompleteAnswer {
  return { kind: 'complete', params };
}

/** Keep the user on the screen they submitted, with `message` shown (and `data` for the screen, if it needs any). */
export function flowError(message: string, data?: Readonly<Record<string, unknown>>): FlowErrorAnswer {
  return { kind: 'error', message, data };
}

/** What a handler is told about a request. */
export interface FlowRequestInfo<TContext = unknown> {
  /** The conversation's context (after the submit's event, in {@link ScreenSubmit.answer}). */
  readonly context: TContext;
  /** The conversation's state (`booking.pick`). */
  readonly state: string;
  readonly botId: string;
  readonly user: string;
  /** The screen the request came from (undefined on INIT). */
  readonly screen: string | undefined;
  /** What the screen sent (its `on-click-action`'s payload); `{}` on INIT. */
  readonly data: Readonly<Record<string, unknown>>;
  /** The flow token of this flow (one per flow message the conversation sent). */
  readonly token: string;
  /** The runtime's clock (ms since the epoch): the simulated one in tests, so dates a screen offers are reproducible. */
  readonly now: number;
}

/** A handler's answer, now or later (within the budget). */
export type FlowAnswerOf<TContext> = (info: FlowRequestInfo<TContext>) => FlowAnswer | Promise<FlowAnswer>;

/**
 * A submit that changes the conversation: `event` goes to the machine as a durable turn (once per
 * flow token, screen and data, however often WhatsApp retries it), then `answer` reads the context
 * the event left.
 */
export interface ScreenSubmit<TContext = unknown> {
  readonly event: (info: FlowRequestInfo<TContext>) => EventObject;
  readonly answer: FlowAnswerOf<TContext>;
}

/** One screen's submit: read only (a function), or a durable turn ({@link ScreenSubmit}). */
export type ScreenHandler<TContext = unknown> = FlowAnswerOf<TContext> | ScreenSubmit<TContext>;

/** The default time a Flow request may take before the user sees an error screen (ms). */
export const DEFAULT_FLOW_BUDGET_MS = 3000;

/** The default text a user sees on a flow whose token is no longer valid. */
export const DEFAULT_FLOW_EXPIRED = 'This form has expired. Send us a message to get a new one.';

/** How a state answers its data-exchange flow. */
export interface FlowScreens<TContext = unknown> {
  /** The flow's id, when the state may send several flows (checked against what it sends). */
  readonly flowId?: string | undefined;
  /** Answers INIT: the first screen and its data. */
  readonly open: FlowAnswerOf<TContext>;
  /** Answers BACK on a screen with `refresh_on_back` (default: that screen again, without data). */
  readonly back?: FlowAnswerOf<TContext> | undefined;
  /** Answers each screen's `data_exchange` submit, by screen name. */
  readonly screens: Readonly<Record<string, ScreenHandler<TContext>>>;
  /** Where an error on opening is shown (default: none, the request fails with 500 and WhatsApp shows its own error). */
  readonly firstScreen?: string | undefined;
  /** What the user sees when the flow's token is no longer valid (427: the conversation moved on or ended). */
  readonly expired?: string | undefined;
  /** How long one answer may take (ms, default 3000; WhatsApp gives up after 10 s). */
  readonly budgetMs?: number | undefined;
}

/** Whether a screen's handler is a durable submit. */
export function isSubmit<C>(h: ScreenHandler<C>): h is ScreenSubmit<C> {
  return typeof h === 'object' && h !== null && typeof (h as ScreenSubmit<C>).event === 'function';
}

/** Problems with a bot's `flows` option, as messages naming the state and field (empty when fine). */
export function flowScreensProblems(flows: Readonly<Record<string, FlowScreens<never>>>): string[] {
  const out: string[] = [];
  if (typeof flows !== 'object' || flows === null) return ['flows must be an object keyed by state path'];
  for (const [state, f] of Object.entries(flows)) {
    const at = `flows["${state}"]`;
    if (typeof f !== 'object' || f === null) {
      out.push(`${at} must be { open, screens }`);
      continue;
    }
    if (typeof f.open !== 'function') out.push(`${at}.open must be a function answering INIT`);
    if (f.back !== undefined && typeof f.back !== 'function') out.push(`${at}.back must be a function`);
    if (typeof f.screens !== 'object' || f.screens === null) out.push(`${at}.screens must be an object keyed by screen name`);
    else {
      for (const [name, h] of Object.entries(f.screens)) {
        const ok = typeof h === 'function' || (isSubmit(h) && typeof h.answer === 'function');
        if (!ok) out.push(`${at}.screens.${name} must be a function or { event, answer }`);
      }
    }
    const budget = f.budgetMs;
    if (budget !== undefined && (!Number.isInteger(budget) || budget < 1 || budget > 9000)) out.push(`${at}.budgetMs must be a whole number of ms from 1 to 9000 (WhatsApp gives up after 10 s)`);
    if (f.expired !== undefined && (typeof f.expired !== 'string' || f.expired.length === 0)) out.push(`${at}.expired must be a non-empty text`);
  }
  return out;
}

/**
 * The declaration that answers a conversation in `state` (its text as stored: `a.b.c`, or a
 * parallel state's JSON): the active state's own entry, else its nearest parent's, with the path
 * it was found under.
 */
export function flowScreensFor<C>(
  flows: Readonly<Record<string, FlowScreens<C>>> | undefined,
  state: string | null | undefined,
): { readonly path: string; readonly screens: FlowScreens<C> } | undefined {
  if (!flows) return undefined;
  for (const full of statePaths(state)) {
    const parts = full.split('.');
    for (let n = parts.length; n > 0; n--) {
      const path = parts.slice(0, n).join('.');
      const screens = flows[path];
      if (screens) return { path, screens };
    }
  }
  return undefined;
}
