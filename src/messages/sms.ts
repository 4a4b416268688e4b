/**
 * Messages as SMS text, for when the interactive channel cannot reach a user, and the way back:
 * an inbound SMS read as the choice it names. Pure functions.
 *
 * Two choices differ from a literal reading of the brief, to keep texts in GSM-7 (an en dash or
 * `…` would force UCS-2 and cut each part from 160 to 70 characters): rows use ` - ` between title
 * and description, and a shortened body ends in `...` unless the text is UCS-2 anyway (then `…`).
 */
import { MessageValidationError } from '../errors.js';
import { ConfigError } from '../errors.js';
import { analyzeSms, isGsm7, type SmsEncoding } from './gsm.js';
import type { ButtonsMessage, Choice, ListMessage, Message } from './message.js';

/** Segments an SMS may take unless the bot says otherwise. */
export const DEFAULT_MAX_SMS_SEGMENTS = 3;

/** The line under numbered choices. */
export const DEFAULT_SMS_HINT = 'Reply with a number.';

/** The line under a flow's body when the bot gives no text for SMS. */
export function defaultFlowNote(cta: string): string {
  return `${cta}: this form needs WhatsApp. Please open this chat in WhatsApp.`;
}

/** How to render a message as SMS. */
export interface SmsRenderOptions {
  /** Most segments the text may take (an integer ≥ 1, or `Infinity`); default 3. */
  readonly maxSegments?: number | undefined;
  /** For a flow: the text to put under its body instead of {@link defaultFlowNote}. */
  readonly flowText?: string | undefined;
  /** The line under numbered choices; default {@link DEFAULT_SMS_HINT}; `''` for none. */
  readonly hint?: string | undefined;
  /** For a flow without `flowText`: the note made from its call-to-action label. */
  readonly flowNote?: ((cta: string) => string) | undefined;
}

/**
 * What was left out to fit the segment limit, in this order: row descriptions, footer, header
 * (a list's header text or a button message's media link), body (shortened at a word boundary,
 * or dropped when not even its first word fits), then section titles and the hint.
 */
export type SmsShortening = 'descriptions' | 'footer' | 'header' | 'body' | 'sectionTitles' | 'hint';

/** A rendered SMS and what it costs. */
export interface RenderedSms {
  readonly text: string;
  readonly encoding: SmsEncoding;
  /** Septets (GSM-7) or UTF-16 code units (UCS-2). */
  readonly units: number;
  readonly segments: number;
  /** What was left out or shortened, in the order it happened; empty when the text fits as is. */
  readonly shortened: SmsShortening[];
}

interface Row {
  readonly n: number;
  readonly title: string;
  readonly description?: string | undefined;
}

interface Section {
  readonly title?: string | undefined;
  readonly rows: readonly Row[];
}

/** A message taken apart into what an SMS shows, so that parts can be dropped one by one. */
interface Draft {
  readonly header?: string | undefined;
  readonly body: string;
  readonly media?: string | undefined;
  readonly note?: string | undefined;
  readonly sections: readonly Section[];
  readonly sectionTitles: boolean;
  readonly footer?: string | undefined;
  readonly hint?: string | undefined;
}

/** The message as SMS text, within `options.maxSegments` when it can be (see {@link renderSmsDetailed}). */
export function renderSms(message: Message, options: SmsRenderOptions = {}): string {
  return renderSmsDetailed(message, options).text;
}

/**
 * The message as SMS text, with its encoding, segments and what was shortened.
 *
 * A bot's `sms` override wins for any variant; text and SMS messages are their text. A list shows
 * its header, body, numbered rows (`1. Title - description`, under section titles when there are
 * several sections), footer and a hint; reply buttons show the body, the media link, numbered
 * choices, footer and hint; a flow shows its body and `flowText` or a note naming its
 * call-to-action. Over `maxSegments`, parts are left out in the order of {@link SmsShortening}.
 * The numbers and titles of the choices, and a flow's note, are never changed or dropped: when
 * they alone exceed the limit, the text is returned over it (check `segments`). A text that has
 * no word boundary to cut at is likewise returned whole.
 */
export function renderSmsDetailed(message: Message, options: SmsRenderOptions = {}): RenderedSms {
  const max = maxSegmentsOf(options);
  const fits = (d: Draft): boolean => analyzeSms(compose(d)).segments <= max;
  let draft = draftOf(message, options);
  const shortened: SmsShortening[] = [];
  for (const [name, step] of STEPS) {
    if (fits(draft)) break;
    const next = step(draft, fits);
    if (next === undefined) continue;
    draft = next;
    shortened.push(name);
  }
  const text = compose(draft);
  const a = analyzeSms(text);
  return { text, encoding: a.encoding, units: a.units, segments: a.segments, shortened };
}

function maxSegmentsOf(options: SmsRenderOptions): number {
  const max = options.maxSegments ?? DEFAULT_MAX_SMS_SEGMENTS;
  if (max === Infinity || (Number.isInteger(max) && max >= 1)) return max;
  throw new ConfigError('maxSegments', `must be an integer of at least 1, or Infinity (got ${max})`);
}

function draftOf(m: Message, options: SmsRenderOptions): Draft {
  const plain = (body: string): Draft => ({ body, sections: [], sectionTitles: false });
  if (m.kind === 'text' || m.kind === 'sms') return plain(m.text);
  if (m.sms !== undefined) return plain(m.sms);
  if (m.kind === 'list') return listDraft(m, options);
  if (m.kind === 'buttons') return buttonsDraft(m, options);
  if (m.kind === 'template') throw new MessageValidationError([{ path: ['sms'], message: `template "${m.template.name}" has no text of its own: give it an \`sms\` text to send by SMS` }]);
  const note = options.flowText ?? (options.flowNote ?? defaultFlowNote)(m.flow.action.parameters.flow_cta);
  return { ...plain(m.flow.body), note };
}

function hintOf(options: SmsRenderOptions): string | undefined {
  const hint = options.hint ?? DEFAULT_SMS_HINT;
  return hint === '' ? undefined : hint;
}

function listDraft(m: ListMessage, options: SmsRenderOptions): Draft {
  const lm = m.listMessages;
  let n = 0;
  const sections = lm.sections.map((s) => ({
    title: s.title,
    rows: s.messages.map((r) => ({ n: ++n, title: r.title, description: r.description })),
  }));
  return { header: lm.headerText, body: lm.body, sections, sectionTitles: sections.length > 1, footer: lm.footer, hint: hintOf(options) };
}

function buttonsDraft(m: ButtonsMessage, options: SmsRenderOptions): Draft {
  const rb = m.replyButtons;
  const doc = rb.headerDocument;
  const media = rb.headerImage?.link ?? rb.headerVideo?.link ?? (doc && `${doc.fileName}: ${doc.link}`);
  const rows = rb.buttons.map((b, i) => ({ n: i + 1, title: b.title }));
  return { body: rb.body, media, sections: [{ rows }], sectionTitles: false, footer: rb.footer, hint: hintOf(options) };
}

function lines(...parts: (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p.trim() !== '').join('\n');
}

function rowLine(r: Row): string {
  return r.description === undefined ? `${r.n}. ${r.title}` : `${r.n}. ${r.title} - ${r.description}`;
}

function compose(d: Draft): string {
  const top = lines(d.header, d.body, d.media);
  const choices = d.sections.map((s) => lines(d.sectionTitles ? s.title : undefined, ...s.rows.map(rowLine))).join(d.sectionTitles ? '\n\n' : '\n');
  const hint = d.sections.length > 0 ? d.hint : undefined;
  return [top, d.note, choices, lines(d.footer, hint)].filter((p) => p !== undefined && p !== '').join('\n\n');
}

type Step = (d: Draft, fits: (d: Draft) => boolean) => Draft | undefined;

const STEPS: readonly (readonly [SmsShortening, Step])[] = [
  ['descriptions', dropDescriptions],
  ['footer', (d) => (d.footer === undefined ? undefined : { ...d, footer: undefined })],
  ['header', (d) => (d.header === undefined && d.media === undefined ? undefined : { ...d, header: undefined, media: undefined })],
  ['body', shortenBody],
  ['sectionTitles', (d) => (d.sectionTitles ? { ...d, sectionTitles: false } : undefined)],
  ['hint', (d) => (d.hint === undefined ? undefined : { ...d, hint: undefined })],
];

function dropDescriptions(d: Draft): Draft | undefined {
  if (!d.sections.some((s) => s.rows.some((r) => r.description !== undefined))) return undefined;
  return { ...d, sections: d.sections.map((s) => ({ title: s.title, rows: s.rows.map((r) => ({ n: r.n, title: r.title })) })) };
}

/** Ends of words in a text: the indexes of whitespace that follows a non-space character. */
function wordEnds(text: string): number[] {
  const ends: number[] = [];
  for (const m of text.matchAll(/\S(?=\s)/gu)) ends.push(m.index + m[0].length);
  return ends;
}

function withCutBody(d: Draft, end: number): Draft {
  const kept = d.body.slice(0, end).replace(/[\s,;:\-–—]+$/u, '');
  const ellipsis = isGsm7(compose({ ...d, body: kept })) ? '...' : '…';
  return { ...d, body: kept + ellipsis };
}

/**
 * The body cut at the last word end that lets the text fit, with an ellipsis (a binary search:
 * a longer prefix never takes fewer segments). Dropped when no cut fits and something else is
 * left to send; unchanged (`undefined`) when the body is all there is.
 */
function shortenBody(d: Draft, fits: (d: Draft) => boolean): Draft | undefined {
  if (d.body === '') return undefined;
  const ends = wordEnds(d.body);
  let lo = 0;
  let hi = ends.length - 1;
  let best: Draft | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const candidate = withCutBody(d, ends[mid]!);
    if (fits(candidate)) {
      best = candidate;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (best !== undefined) return best;
  return d.sections.length > 0 || d.note !== undefined ? { ...d, body: '' } : undefined;
}

/**
 * The choice an inbound SMS names, among `choices` (from `choicesOf(message)` of the message that
 * went out as SMS): its number (`2`, `2.`, `2)`, ` 2 `, or `2. Large` when the title matches), or
 * its title typed ignoring case, accents, spaces and punctuation. `undefined` for anything else,
 * an out-of-range number, or a title that matches several choices.
 */
export function matchSmsReply(text: string, choices: readonly Choice[]): Choice | undefined {
  return byNumber(text, choices) ?? byTitle(text, choices);
}

function byNumber(text: string, choices: readonly Choice[]): Choice | undefined {
  const m = /^\s*(\d{1,4})\s*[.)]?\s*(.*)$/su.exec(text);
  if (m === null) return undefined;
  const choice = choices[Number(m[1]) - 1];
  if (choice === undefined) return undefined;
  const rest = normalizeReply(m[2] ?? '');
  return rest === '' || rest === normalizeReply(choice.title) ? choice : undefined;
}

function byTitle(text: string, choices: readonly Choice[]): Choice | undefined {
  const typed = normalizeReply(text);
  if (typed === '') return undefined;
  const found = choices.filter((c) => normalizeReply(c.title) === typed);
  return found.length === 1 ? found[0] : undefined;
}

/**
 * A reply or a title reduced for comparison: lower case, accents stripped (NFD, then combining
 * marks removed), without spaces, punctuation, control characters and emoji.
 */
export function normalizeReply(s: string): string {
  return s
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[\s\p{P}\p{Z}\p{C}\p{Extended_Pictographic}]/gu, '');
}
