/**
 * The harness's assertions. Each failure says what was expected, what the bot actually sent since
 * the user's last action (one compact line per message), and the state the conversation is in.
 */
import type { Choice } from '../messages/message.js';
import { isTappableSent, type SentKind, type SentMessage } from './harness-sent.js';
import { choicesLine, sentLine } from './transcript-lines.js';

/** What the assertions look at. */
export interface ExpectView {
  /** What the bot sent since the user's last action. */
  readonly latest: readonly SentMessage[];
  /** The last list, buttons, flow or template message sent. */
  readonly lastInteractive: SentMessage | undefined;
  /** The state value as text. */
  readonly state: string | undefined;
  /** The last action, for people (`tap "Small"`). */
  readonly lastAction: string;
}

/** What {@link expectSent} looks for; every given field must match one and the same message. */
export interface SentMatch {
  readonly kind?: SentKind | undefined;
  readonly channel?: 'interactive' | 'sms' | undefined;
  /** A substring of, or a pattern for, the message's text (header, body, footer, SMS text). */
  readonly text?: string | RegExp | undefined;
  /** The same as `text`. */
  readonly body?: string | RegExp | undefined;
  /** The choices shown, in order: ids or titles (titles ignore case). */
  readonly choices?: readonly string[] | undefined;
}

/** The error the harness's assertions throw. */
export class ExpectationError extends Error {
  override name = 'ExpectationError';
}

/** Everything a message shows as text: header, body, footer, a document's name, a template's name and parameters, the text. */
export function readableText(s: SentMessage): string {
  const parts: (string | undefined)[] = [];
  if (s.kind === 'template') {
    const r = s.rendered;
    parts.push(s.name, ...s.headerParameters, ...s.parameters, r?.header?.type === 'text' ? r.header.text : undefined, r?.body, r?.footer);
  }
  if (s.kind === 'list') parts.push(s.listMessages.headerText, s.listMessages.body, s.listMessages.footer);
  if (s.kind === 'buttons') parts.push(s.replyButtons.headerDocument?.fileName, s.replyButtons.body, s.replyButtons.footer);
  if (s.kind === 'flow') parts.push(s.flow.body);
  parts.push(s.text);
  return parts.filter((p) => p !== undefined).join('\n');
}

/** The choice named by an id (exactly) or a title (ignoring case). */
export function findChoice(choices: readonly Choice[], idOrTitle: string): Choice | undefined {
  const lower = idOrTitle.trim().toLowerCase();
  return choices.find((c) => c.id === idOrTitle) ?? choices.find((c) => c.title.toLowerCase() === lower) ?? choices.find((c) => c.id.toLowerCase() === lower);
}

/** The sent messages as numbered compact lines, and the state: the tail of every failure. */
export function whatWasSent(view: ExpectView): string {
  const sent = view.latest.length
    ? `Since the last action (${view.lastAction}) the bot sent:\n${view.latest.map((s, i) => `  ${i + 1}. ${sentLine(s)}`).join('\n')}`
    : `Since the last action (${view.lastAction}) the bot sent nothing.`;
  return `${sent}\nState: ${view.state ?? '(no conversation yet)'}`;
}

/** Throws unless the conversation is in `state` (a state value as text, or as an object). */
export function expectState(view: ExpectView, state: string | Record<string, unknown>): void {
  const want = typeof state === 'string' ? state : JSON.stringify(state);
  if (view.state === want) return;
  const paths = view.state === undefined ? [] : statePaths(view.state);
  if (typeof state === 'string' && paths.includes(state)) return;
  const shown = view.state === undefined ? 'no state (it has not started)' : paths.length === 1 ? JSON.stringify(paths[0]) : JSON.stringify(paths.join(', '));
  fail(`Expected the conversation to be in state ${JSON.stringify(want)}, but it is in ${shown}.`, view);
}

/**
 * A state value as dotted paths, parents included: `{"ordering":"menu"}` is `ordering` and
 * `ordering.menu`, so `expectState('ordering.menu')` and `expectState('ordering')` both match.
 */
export function statePaths(state: string): string[] {
  let value: unknown;
  try {
    value = state.startsWith('{') ? JSON.parse(state) : state;
  } catch {
    return [state];
  }
  const out: string[] = [];
  const walk = (v: unknown, prefix: string): void => {
    if (typeof v === 'string') {
      out.push(prefix ? `${prefix}.${v}` : v);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    for (const [k, child] of Object.entries(v)) {
      const here = prefix ? `${prefix}.${k}` : k;
      out.push(here);
      walk(child, here);
    }
  };
  walk(value, '');
  return out.sort((a, b) => b.length - a.length); // the deepest first, for messages
}

/** Throws unless one message sent since the last action matches every given field. */
export function expectSent(view: ExpectView, match: SentMatch): void {
  if (view.latest.some((s) => matches(s, match))) return;
  fail(`Expected the bot to send ${describeMatch(match)}.`, view);
}

/** Throws unless the last interactive message shows exactly these choices, in this order. */
export function expectChoices(view: ExpectView, choices: readonly string[]): void {
  const last = view.lastInteractive;
  if (last && sameChoices(last.choices, choices)) return;
  const shown = last ? `The last interactive message (${last.kind}) shows: ${choicesLine(last.choices)}.` : 'The bot has sent no interactive message.';
  fail(`Expected the choices ${JSON.stringify(choices)}. ${shown}`, view);
}

/** Throws if the bot sent anything since the last action. */
export function expectNothingSent(view: ExpectView): void {
  if (view.latest.length === 0) return;
  fail(`Expected the bot to send nothing.`, view);
}

/** Throws unless a message sent since the last action shows this text. */
export function expectText(view: ExpectView, text: string | RegExp): void {
  if (view.latest.some((s) => textMatches(s, text))) return;
  fail(`Expected the bot to send a message with text ${describePattern(text)}.`, view);
}

/** Throws unless the last interactive message offers this choice; returns it. */
export function choiceOrThrow(view: ExpectView, idOrTitle: string): { choice: Choice; message: SentMessage } {
  const message = view.lastInteractive;
  if (!message) fail(`Cannot tap ${JSON.stringify(idOrTitle)}: the bot has sent no list or buttons yet.`, view);
  if (message.channel === 'sms' && message.choices.length) {
    fail(`Cannot tap ${JSON.stringify(idOrTitle)}: the last ${message.kind} message went by SMS, so it has no buttons; answer with sms("1") or sms("<title>").`, view);
  }
  if (message.choices.length === 0) fail(`Cannot tap ${JSON.stringify(idOrTitle)}: the last interactive message is a ${message.kind}, which has no buttons or rows.`, view);
  const choice = findChoice(message.choices, idOrTitle);
  if (!choice) {
    fail(`Cannot tap ${JSON.stringify(idOrTitle)}: no such choice on the last interactive message (${message.kind}). Choices shown: ${choicesLine(message.choices)}.`, view);
  }
  return { choice, message };
}

function fail(what: string, view: ExpectView): never {
  throw new ExpectationError(`${what}\n${whatWasSent(view)}`);
}

function matches(s: SentMessage, m: SentMatch): boolean {
  if (m.kind !== undefined && s.kind !== m.kind) return false;
  if (m.channel !== undefined && s.channel !== m.channel) return false;
  for (const t of [m.text, m.body]) if (t !== undefined && !textMatches(s, t)) return false;
  return m.choices === undefined || (isTappableSent(s) && sameChoices(s.choices, m.choices));
}

function textMatches(s: SentMessage, pattern: string | RegExp): boolean {
  const text = readableText(s);
  return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
}

function sameChoices(shown: readonly Choice[], want: readonly string[]): boolean {
  return shown.length === want.length && want.every((w, i) => findChoice([shown[i]!], w) !== undefined);
}

function describeMatch(m: SentMatch): string {
  const parts = [m.kind === undefined ? 'a message' : `a ${m.kind} message`];
  if (m.channel !== undefined) parts.push(`by ${m.channel === 'sms' ? 'SMS' : 'the interactive channel'}`);
  for (const t of [m.text, m.body]) if (t !== undefined) parts.push(`with text ${describePattern(t)}`);
  if (m.choices !== undefined) parts.push(`with the choices ${JSON.stringify(m.choices)}`);
  return parts.join(' ');
}

function describePattern(p: string | RegExp): string {
  return typeof p === 'string' ? `containing ${JSON.stringify(p)}` : `matching ${String(p)}`;
}
