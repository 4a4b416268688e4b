/**
 * Compact, deterministic one-line descriptions of what a bot sent, for transcripts and for the
 * harness's failure messages. Nothing random goes in (no flow token, no provider id), so a line
 * changes only when the bot's behaviour does.
 */
import type { Choice } from '../messages/message.js';
import type { ListMessages, ReplyButtons, FlowBody } from '../messages/schema.js';
import { templatePayloads, type TemplateBody } from '../messages/template.js';
import { templateParameters } from './harness-cloud.js';
import type { SentMessage } from './harness-sent.js';

const q = (s: string): string => JSON.stringify(s);

/** One line describing a sent message: its kind, texts, choices, and how it travelled. */
export function sentLine(s: SentMessage): string {
  if (s.kind === 'text' || s.kind === 'sms') return `${s.kind} ${q(s.text)}`;
  const seed = s.kind === 'list' ? listLine(s.listMessages) : s.kind === 'buttons' ? buttonsLine(s.replyButtons) : s.kind === 'template' ? templateLine(s.template) : flowLine(s.flow);
  if (s.channel === 'interactive') return seed;
  return `${seed} ─ by SMS${s.fallback ? ' (fallback)' : ''}: ${q(s.text ?? '')}`;
}

/** Choices as `1. Title (id)`, for failure messages. */
export function choicesLine(choices: readonly Choice[]): string {
  if (choices.length === 0) return '(no choices)';
  return choices.map((c, i) => `${i + 1}. ${q(c.title)} (id ${q(c.id)})`).join(', ');
}

function listLine(l: ListMessages): string {
  const parts = ['list'];
  if (l.headerText !== undefined) parts.push(`header=${q(l.headerText)}`);
  parts.push(q(l.body));
  if (l.footer !== undefined) parts.push(`footer=${q(l.footer)}`);
  parts.push(`button=${q(l.buttonText)}`);
  const sections = l.sections.map((s) => {
    const rows = s.messages.map((r) => `${r.id}=${q(r.title)}${r.description === undefined ? '' : ` (${q(r.description)})`}`).join(', ');
    return s.title === undefined ? rows : `${q(s.title)}: ${rows}`;
  });
  parts.push(`rows=[${sections.join(' | ')}]`);
  return parts.join(' ');
}

function buttonsLine(b: ReplyButtons): string {
  const parts = ['buttons'];
  if (b.headerImage) parts.push(`image=${b.headerImage.link}`);
  if (b.headerVideo) parts.push(`video=${b.headerVideo.link}`);
  if (b.headerDocument) parts.push(`document=${q(b.headerDocument.fileName)} ${b.headerDocument.link}`);
  parts.push(q(b.body));
  if (b.footer !== undefined) parts.push(`footer=${q(b.footer)}`);
  parts.push(`buttons=[${b.buttons.map((x) => `${x.id}=${q(x.title)}`).join(', ')}]`);
  return parts.join(' ');
}

function flowLine(f: FlowBody): string {
  const p = f.action.parameters;
  const parts = ['flow', q(f.body), `cta=${q(p.flow_cta)}`, `flow_id=${p.flow_id}`, `mode=${p.mode}`, `action=${p.flow_action}`];
  if (p.flow_action_payload) {
    parts.push(`screen=${p.flow_action_payload.screen}`);
    if (p.flow_action_payload.data !== undefined) parts.push(`data=${JSON.stringify(p.flow_action_payload.data)}`);
  }
  return parts.join(' ');
}

/** A template: `template <name> language=<code> header=[…] body=[…] replies=[…]`. */
export function templateLine(t: TemplateBody): string {
  const params = templateParameters(t);
  const replies = templatePayloads(t);
  const parts = ['template', t.name, `language=${t.language.code}`];
  if (params.header.length) parts.push(`header=[${params.header.map(q).join(', ')}]`);
  if (params.body.length) parts.push(`body=[${params.body.map(q).join(', ')}]`);
  if (replies.length) parts.push(`replies=[${replies.join(', ')}]`);
  return parts.join(' ');
}
