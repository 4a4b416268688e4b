/**
 * The message model: what a bot emits. Each variant holds the seed's body object as the provider
 * receives it, so converting to a request is only a matter of adding `from`, `to` and `type`.
 */
import type { FlowBody, ListMessages, ReplyButtons } from './schema.js';
import { templatePayloads, type TemplateBody } from './template.js';

/** Options every interactive message accepts. */
export interface SmsOptions {
  /** The text to send instead when this message goes by SMS (overrides the rendering). */
  readonly sms?: string | undefined;
}

/** A list message (`type: "contacts"`, `listMessages`). */
export interface ListMessage extends SmsOptions {
  readonly kind: 'list';
  readonly listMessages: ListMessages;
}

/** Reply buttons, with an optional image, video or document header (`replyButtons`). */
export interface ButtonsMessage extends SmsOptions {
  readonly kind: 'buttons';
  readonly replyButtons: ReplyButtons;
}

/** A flow message (`flow`). The runtime fills `flow_token` when it is left empty. */
export interface FlowMessage extends SmsOptions {
  readonly kind: 'flow';
  readonly flow: FlowBody;
}

/**
 * A template approved in WhatsApp Manager (Cloud API `type: "template"`), the one kind WhatsApp
 * delivers after the 24-hour window closed. Needs a provider with templates (the Cloud API).
 */
export interface TemplateMessage {
  readonly kind: 'template';
  readonly template: TemplateBody;
  /** The text to send instead when this message goes by SMS (a template has no text of its own here). */
  readonly sms?: string | undefined;
}

/** Plain text: `type: text` on a provider that carries text (the Cloud API), an SMS on the seed provider, whose messaging endpoint has no text body. */
export interface TextMessage {
  readonly kind: 'text';
  readonly text: string;
}

/** An SMS sent on purpose. */
export interface SmsMessage {
  readonly kind: 'sms';
  readonly text: string;
}

/** Anything a bot can emit. */
export type Message = ListMessage | ButtonsMessage | FlowMessage | TemplateMessage | TextMessage | SmsMessage;

/** The interactive variants: the ones with choices or a form. */
export type InteractiveMessage = ListMessage | ButtonsMessage | FlowMessage;

/** True for list, buttons and flow. */
export function isInteractive(m: Message): m is InteractiveMessage {
  return m.kind === 'list' || m.kind === 'buttons' || m.kind === 'flow';
}

/** A choice a user can make on a message: a list row or a reply button. */
export interface Choice {
  readonly id: string;
  readonly title: string;
  readonly description?: string | undefined;
}

/** The choices a message offers, in the order shown. */
export function choicesOf(m: Message): Choice[] {
  if (m.kind === 'list') return m.listMessages.sections.flatMap((s) => s.messages.map((r) => ({ id: r.id, title: r.title, description: r.description })));
  if (m.kind === 'buttons') return m.replyButtons.buttons.map((b) => ({ id: b.id, title: b.title }));
  if (m.kind === 'template') return templatePayloads(m.template).map((p) => ({ id: p, title: p }));
  return [];
}
