/** The shape of a recorded transcript, and its text form (what a diff compares). */

/** An event sent as is with {@link TestConversation.send}. */
export interface RawEvent {
  readonly type: string;
  readonly [k: string]: unknown;
}

/**
 * One thing the user did: tap a choice (by id or title), type text, submit the flow, answer by
 * SMS, send a raw event, let time pass, or wait for the bot's invocations to settle. One key
 * each, so a transcript file reads naturally.
 */
export type TranscriptAction =
  | { readonly tap: string }
  | { readonly type: string }
  | { readonly flow: Record<string, unknown> }
  | { readonly sms: string }
  | { readonly send: RawEvent; readonly source?: 'whatsapp' | 'sms' | 'api' }
  | { readonly advance: string | number }
  | { readonly settle: true }
  | AgentAction;

/** What an agent did during a handoff: claim it, reply (text, or a message's JSON), release it (with a note). */
export interface AgentAction {
  readonly agent: string;
  readonly claim?: true | undefined;
  readonly reply?: string | Record<string, unknown> | undefined;
  readonly release?: true | string | undefined;
}

/** One step: the user's action, what the bot sent in answer (one line each), the state after it. */
export interface TranscriptStep {
  readonly action: TranscriptAction;
  /** The messages the bot sent, described by `sentLine()`. */
  readonly sent: readonly string[];
  /** The conversation's state value as text afterwards (`null` before it exists). */
  readonly state: string | null;
  /** Set when the bot failed handling the action (or the action could not be done). */
  readonly error?: string;
  /**
   * Set when invocations still running after the previous step had settled before this action
   * (the user waited in real time): a replay waits for them at the same place.
   */
  readonly waited?: true;
}

/** An action for people: `tap "Small"`, `type "hi"`, `advance 10m`. */
export function actionLabel(a: TranscriptAction): string {
  if ('tap' in a) return `tap ${JSON.stringify(a.tap)}`;
  if ('type' in a) return `type ${JSON.stringify(a.type)}`;
  if ('flow' in a) return `submit the flow ${JSON.stringify(a.flow)}`;
  if ('sms' in a) return `SMS ${JSON.stringify(a.sms)}`;
  if ('send' in a) return `send ${JSON.stringify(a.send)}${a.source === undefined ? '' : ` from ${a.source}`}`;
  if ('settle' in a) return 'wait until the invocations settle';
  if ('agent' in a) return agentLabel(a);
  return `advance ${typeof a.advance === 'number' ? `${a.advance}ms` : a.advance}`;
}

function agentLabel(a: AgentAction): string {
  const who = `agent ${JSON.stringify(a.agent)}`;
  if (a.claim) return `${who} claims the handoff`;
  if (a.reply !== undefined) return `${who} replies ${JSON.stringify(a.reply)}`;
  return `${who} releases the handoff${typeof a.release === 'string' ? ` (${JSON.stringify(a.release)})` : ''}`;
}

/** A step as text lines: `> action`, `< message` for each message, `= state`, `! error`. */
export function stepLines(step: TranscriptStep): string[] {
  return [
    `> ${actionLabel(step.action)}`,
    ...(step.sent.length ? step.sent.map((s) => `< ${s}`) : ['< (nothing)']),
    `= ${step.state ?? '(no conversation)'}`,
    ...(step.error === undefined ? [] : [`! ${step.error}`]),
  ];
}

/** Every step's lines, in order. */
export function transcriptLines(steps: readonly TranscriptStep[]): string[] {
  return steps.flatMap(stepLines);
}

/** Checks that a value read from JSON is a list of steps; throws naming what is wrong. */
export function asSteps(value: unknown, where: string): TranscriptStep[] {
  const steps = Array.isArray(value) ? value : (value as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) throw new Error(`${where}: expected a list of transcript steps`);
  steps.forEach((s: unknown, i) => {
    const ok = typeof s === 'object' && s !== null && typeof (s as { action?: unknown }).action === 'object' && Array.isArray((s as { sent?: unknown }).sent);
    if (!ok) throw new Error(`${where}: step ${i + 1} needs an "action" object and a "sent" list`);
  });
  return steps as TranscriptStep[];
}
