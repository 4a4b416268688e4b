/**
 * Typed builders a bot author calls. Each validates its result against the seed's schema and the
 * provider's limits at once, and throws a MessageValidationError listing every problem with the
 * seed's field path (`listMessages.sections[0].messages[2].title`).
 */
import { MessageValidationError, type Issue } from '../errors.js';
import { LIMITS, charLength } from './limits.js';
import type { z } from 'zod';
import type { ButtonsMessage, FlowMessage, ListMessage, SmsMessage, TemplateMessage, TextMessage } from './message.js';
import { TemplateSchema, type TemplateComponent } from './template.js';
import { FlowSchema, ListMessagesSchema, ReplyButtonsSchema, type FlowBody, type ListMessages, type ReplyButtons } from './schema.js';
import { check } from './validate.js';

/** Put into a flow message whose token the runtime fills in (a new token for each flow message a conversation sends). */
export const FLOW_TOKEN_PLACEHOLDER = 'colloquy:flow-token';

/** A list row. */
export interface RowInit {
  readonly id: string;
  readonly title: string;
  readonly description?: string | undefined;
}

/** A list section. `title` is required when there is more than one section. */
export interface SectionInit {
  readonly title?: string | undefined;
  readonly rows: readonly RowInit[];
}

/** What {@link list} takes: either `sections`, or `rows` for a single untitled section. */
export interface ListInit {
  readonly header?: string | undefined;
  readonly body: string;
  readonly footer?: string | undefined;
  /** The label of the button that opens the list (≤ 20 characters). */
  readonly button: string;
  readonly sections?: readonly SectionInit[] | undefined;
  readonly rows?: readonly RowInit[] | undefined;
  /** Text to send instead when this message goes by SMS. */
  readonly sms?: string | undefined;
}

/** A list message: a button that opens sections of rows. */
export function list(init: ListInit): ListMessage {
  const sections = init.sections ?? (init.rows ? [{ rows: init.rows }] : []);
  const body: ListMessages = {
    ...(init.header !== undefined && { headerText: init.header }),
    body: init.body,
    ...(init.footer !== undefined && { footer: init.footer }),
    buttonText: init.button,
    sections: sections.map((s) => ({
      ...(s.title !== undefined && { title: s.title }),
      messages: s.rows.map((r) => ({ id: r.id, title: r.title, ...(r.description !== undefined && { description: r.description }) })),
    })),
  };
  const extra: Issue[] = init.sections !== undefined && init.rows !== undefined ? [{ path: ['listMessages', 'sections'], message: 'give either sections or rows, not both' }] : [];
  return { kind: 'list', listMessages: validated(ListMessagesSchema, body, 'listMessages', init, extra), ...smsOf(init) };
}

/** A reply button. */
export interface ButtonInit {
  readonly id: string;
  readonly title: string;
}

/** What {@link buttons} takes. At most one of `image`, `video`, `document`. */
export interface ButtonsInit {
  /** An https link to a jpeg or png shown above the body. */
  readonly image?: string | undefined;
  /** An https link to an mp4 or 3gpp video shown above the body. */
  readonly video?: string | undefined;
  /** An https link to a document and the name shown for it. */
  readonly document?: { readonly link: string; readonly fileName: string } | undefined;
  readonly body: string;
  readonly footer?: string | undefined;
  readonly buttons: readonly ButtonInit[];
  /** Text to send instead when this message goes by SMS. */
  readonly sms?: string | undefined;
}

/** Reply buttons (one to three), with an optional media header. */
export function buttons(init: ButtonsInit): ButtonsMessage {
  const body: ReplyButtons = {
    ...(init.image !== undefined && { headerImage: { link: init.image } }),
    ...(init.video !== undefined && { headerVideo: { link: init.video } }),
    ...(init.document !== undefined && { headerDocument: { link: init.document.link, fileName: init.document.fileName } }),
    body: init.body,
    ...(init.footer !== undefined && { footer: init.footer }),
    buttons: init.buttons.map((b) => ({ id: b.id, title: b.title })),
  };
  return { kind: 'buttons', replyButtons: validated(ReplyButtonsSchema, body, 'replyButtons', init), ...smsOf(init) };
}

/** What {@link flow} takes. */
export interface FlowInit {
  readonly body: string;
  /** The flow's id in the provider's portal. */
  readonly flowId: string;
  /** The label of the button that opens the flow (≤ 20 characters, no emoji). */
  readonly cta: string;
  /** The first screen, required for `navigate` (the default action). */
  readonly screen?: string | undefined;
  /** Data for the first screen. */
  readonly data?: Record<string, unknown> | undefined;
  /** `draft` (the seed's value, the default) while the flow is unpublished, then `published`. */
  readonly mode?: 'draft' | 'published' | undefined;
  readonly action?: 'navigate' | 'data_exchange' | undefined;
  /** Leave unset: the runtime puts a token of its own here (one per flow message, naming the conversation). */
  readonly token?: string | undefined;
  /** Text to send instead when this message goes by SMS (a flow cannot run over SMS). */
  readonly sms?: string | undefined;
}

/** A flow message: a call-to-action that opens a WhatsApp Flow form. */
export function flow(init: FlowInit): FlowMessage {
  const action = init.action ?? 'navigate';
  const body: FlowBody = {
    body: init.body,
    action: {
      name: 'flow',
      parameters: {
        mode: init.mode ?? 'draft',
        flow_message_version: '3',
        flow_id: init.flowId,
        flow_token: init.token ?? FLOW_TOKEN_PLACEHOLDER,
        flow_cta: init.cta,
        flow_action: action,
        ...(action === 'navigate' && {
          flow_action_payload: { screen: init.screen ?? '', ...(init.data !== undefined && { data: init.data }) },
        }),
      },
    },
  };
  const extra: Issue[] =
    action !== 'navigate' && (init.screen !== undefined || init.data !== undefined)
      ? [{ path: ['flow', 'action', 'parameters', 'flow_action_payload'], message: `screen and data apply only to flow_action "navigate" (got "${action}")` }]
      : [];
  return { kind: 'flow', flow: validated(FlowSchema, body, 'flow', init, extra), ...smsOf(init) };
}

/** Plain text. */
export function text(body: string): TextMessage {
  checkText(body, LIMITS.text.body, 'text');
  return { kind: 'text', text: body };
}

/** An SMS sent on purpose, whatever the channel the conversation is on. */
export function sms(body: string): SmsMessage {
  checkText(body, LIMITS.sms.message, 'sms');
  return { kind: 'sms', text: body };
}

function checkText(body: unknown, max: number, field: string): void {
  if (typeof body !== 'string') throw new MessageValidationError([{ path: [field], message: `must be a string (got ${typeof body})` }]);
  const n = charLength(body);
  if (n === 0 || body.trim() === '') throw new MessageValidationError([{ path: [field], message: 'must not be empty' }]);
  if (n > max) throw new MessageValidationError([{ path: [field], message: `must be at most ${max} characters (has ${n})` }]);
}

/** Validates a body object under its seed key, together with the builder's own checks and the
 *  `sms` override, and throws one error listing every problem. */
function validated<T>(schema: z.ZodType<T>, body: unknown, key: string, init: { sms?: string | undefined }, extra: readonly Issue[] = []): T {
  const issues: Issue[] = [...extra];
  const r = check(schema, body, [key]);
  if (!r.ok) issues.push(...r.issues);
  if (init.sms !== undefined) {
    try {
      checkText(init.sms, LIMITS.sms.message, 'sms');
    } catch (e) {
      if (e instanceof MessageValidationError) issues.push(...e.issues);
      else throw e;
    }
  }
  if (issues.length > 0 || !r.ok) throw new MessageValidationError(issues);
  return r.value;
}

function smsOf(init: { sms?: string | undefined }): { sms?: string } {
  if (init.sms === undefined) return {};
  checkText(init.sms, LIMITS.sms.message, 'sms');
  return { sms: init.sms };
}

/** What {@link template} takes: the Cloud API's `template` object, the language as a code or `{ code }`. */
export interface TemplateInit {
  /** The template's name in WhatsApp Manager. */
  readonly name: string;
  /** Its language: `"en_US"`, or `{ code: "en_US" }`. */
  readonly language: string | { readonly code: string; readonly policy?: 'deterministic' | undefined };
  /** Header, body and button parameters; a quick-reply button's `payload` comes back as `reply.<payload>`. */
  readonly components?: readonly TemplateComponent[] | undefined;
  /** Text to send instead when this message goes by SMS. */
  readonly sms?: string | undefined;
}

/**
 * A template message: the only kind WhatsApp delivers once the 24-hour window closed. Needs a
 * provider with templates (the Cloud API); on the seed provider it is refused when sent, naming
 * the bot and the state.
 *
 * @example
 * template({ name: 'appointment_reminder', language: 'en_US', components: [
 *   { type: 'body', parameters: [{ type: 'text', text: 'Tuesday 10:00' }] },
 *   { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'confirm' }] },
 * ] })
 */
export function template(init: TemplateInit): TemplateMessage {
  const language = typeof init.language === 'string' ? { code: init.language } : { ...init.language };
  const body = { name: init.name, language, ...(init.components !== undefined && { components: init.components.map((c) => ({ ...c })) }) };
  return { kind: 'template', template: validated(TemplateSchema, body, 'template', init) as TemplateMessage['template'], ...smsOf(init) };
}
