/**
 * Messages as a phone shows them, in plain text for a terminal: a list's header, body, footer and
 * button, then its numbered rows grouped by section; reply buttons under their media header shown
 * as a link; a flow's call-to-action; a template as `[template name (lang)]` with its parameters and
 * numbered quick replies; an SMS marked `SMS ›`. Numbers are what the chat accepts.
 */
import type { FlowBody, ListMessages, ReplyButtons } from '../messages/schema.js';
import type { SentMessage, SentTemplate } from './harness-sent.js';

/** How to render. */
export interface RenderOptions {
  /** The line under a flow's button (default: the flow's id and first screen). */
  readonly flowNote?: ((flow: FlowBody) => string) | undefined;
}

/** The prefix of a WhatsApp message's first line. */
export const BOT_PREFIX = 'bot › ';
/** The prefix of an SMS's first line. */
export const SMS_PREFIX = 'SMS › ';
const INDENT = ' '.repeat(BOT_PREFIX.length);

/** A sent message as a phone shows it, several lines, no trailing newline. */
export function renderSent(s: SentMessage, options: RenderOptions = {}): string {
  if (s.channel === 'sms') {
    const lines = linesOf(s.text ?? '');
    if (s.kind !== 'text' && s.kind !== 'sms') lines.push(`(by SMS instead of ${INSTEAD_OF[s.kind]}${s.fallback ? ' that could not be delivered' : ''})`);
    return block(SMS_PREFIX, lines);
  }
  if (s.kind === 'text') return block(BOT_PREFIX, linesOf(s.text));
  if (s.kind === 'list') return block(BOT_PREFIX, listLines(s.listMessages));
  if (s.kind === 'buttons') return block(BOT_PREFIX, buttonLines(s.replyButtons));
  if (s.kind === 'template') return block(BOT_PREFIX, templateLines(s));
  return block(BOT_PREFIX, flowLines(s.flow, options));
}

const INSTEAD_OF: Readonly<Record<string, string>> = { list: 'a list', buttons: 'buttons', flow: 'a form', template: 'a template' };

/**
 * A template: `[template name (lang)]` and its parameters, or, when the sandbox knows the template,
 * its header, body and footer as the user sees them; then its quick replies, numbered.
 */
export function templateLines(t: Pick<SentTemplate, 'name' | 'language' | 'parameters' | 'headerParameters' | 'choices' | 'rendered'>): string[] {
  const r = t.rendered;
  const out: string[] = [];
  if (r === undefined) {
    const params = [...t.headerParameters, ...t.parameters];
    out.push(`[template ${t.name} (${t.language})]${params.length ? ` ${params.join(' \u00b7 ')}` : ''}`);
  } else {
    out.push(`[template ${t.name} (${t.language})]`);
    if (r.header?.type === 'text') out.push(r.header.text);
    else if (r.header !== undefined) out.push(t.headerParameters[0] ?? `[${r.header.type}]`);
    out.push(...linesOf(r.body), ...linesOf(r.footer));
  }
  t.choices.forEach((c, i) => out.push(`${i + 1}. [ ${c.title} ]`));
  return out;
}

/** A list: header, body, footer, the button, then rows numbered across sections. */
export function listLines(l: ListMessages): string[] {
  const out = [...linesOf(l.headerText), ...linesOf(l.body), ...linesOf(l.footer), `[ ${l.buttonText} ]`];
  let n = 0;
  for (const section of l.sections) {
    const titled = section.title !== undefined;
    if (titled) out.push(section.title!);
    const pad = titled ? '  ' : '';
    for (const row of section.messages) {
      const num = `${++n}. `;
      out.push(`${pad}${num}${row.title}`);
      if (row.description !== undefined) out.push(`${pad}${' '.repeat(num.length)}${row.description}`);
    }
  }
  return out;
}

/** Reply buttons: the media header as a link, body, footer, numbered buttons. */
export function buttonLines(b: ReplyButtons): string[] {
  const out: string[] = [];
  if (b.headerImage) out.push(`[image] ${b.headerImage.link}`);
  if (b.headerVideo) out.push(`[video] ${b.headerVideo.link}`);
  if (b.headerDocument) out.push(`[document ${b.headerDocument.fileName}] ${b.headerDocument.link}`);
  out.push(...linesOf(b.body), ...linesOf(b.footer));
  b.buttons.forEach((x, i) => out.push(`${i + 1}. [ ${x.title} ]`));
  return out;
}

/** A flow: body, the call-to-action button, and a note. */
export function flowLines(f: FlowBody, options: RenderOptions = {}): string[] {
  const p = f.action.parameters;
  const note = options.flowNote?.(f) ?? `(a form: flow ${p.flow_id}${p.flow_action_payload ? `, screen ${p.flow_action_payload.screen}` : ''})`;
  return [...linesOf(f.body), `[ ${p.flow_cta} ]`, note];
}

function linesOf(text: string | undefined): string[] {
  return text === undefined ? [] : text.split('\n');
}

function block(prefix: string, lines: readonly string[]): string {
  return lines.map((l, i) => (i === 0 ? prefix + l : l === '' ? '' : INDENT + l)).join('\n');
}
