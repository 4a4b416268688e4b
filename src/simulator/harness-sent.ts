/**
 * What the bot sent, as the test harness and the chat show it: each message the sandbox accepted,
 * joined with the outbox row it came from, so it carries its kind (a text and an SMS both arrive
 * as SMS on the seed provider) and whether it stands in for an interactive message that could not
 * be delivered. Messages the sandbox accepted on its Cloud API endpoint are read into the same
 * model: `channel: 'interactive'` is the WhatsApp channel, whichever provider carried it.
 */
import { choicesOf, type Choice, type Message } from '../messages/message.js';
import type { FlowBody, InteractiveRequest, ListMessages, ReplyButtons, SmsRequest } from '../messages/schema.js';
import type { TemplateBody } from '../messages/template.js';
import type { AcceptedCloud, SandboxMessage } from '../sandbox/types.js';
import type { OutboxRecord, Store } from '../store/types.js';
import type { RenderedTemplate } from './cloud-sandbox.js';
import { deliveredMessage, templateParameters } from './harness-cloud.js';

/** The message variants: list, reply buttons, flow, template, plain text and explicit SMS. */
export type SentKind = Message['kind'];

/** A Cloud API request body, exactly as sent (`messaging_product: "whatsapp"`, `to`, `type`, …). */
export type CloudRequest = Readonly<Record<string, unknown>>;

/** What every sent message carries. */
interface SentCommon {
  /** The sandbox's order of acceptance (across all users of one harness). */
  readonly seq: number;
  /**
   * The channel it went by: `interactive` is WhatsApp (the seed's messaging endpoint, or the Cloud
   * API), `sms` an SMS. An interactive message goes by SMS after a fallback or in SMS mode.
   */
  readonly channel: 'interactive' | 'sms';
  /** The provider's id: a `wamid.…`, or an SMS mailing id. */
  readonly providerId: string;
  /** The choices it offers, in the order shown (rows across sections, or buttons). */
  readonly choices: readonly Choice[];
  /** True when it stands in, by SMS, for an interactive message that could not be delivered. */
  readonly fallback: boolean;
  /** The message as the bot built it. */
  readonly message: Message;
  /** The provider request body as sent: the seed's messaging or SMS body, or the Cloud API's. */
  readonly request: InteractiveRequest | SmsRequest | CloudRequest;
  /** The agent who wrote it during a handoff (absent for the bot's own messages). */
  readonly agent?: string | undefined;
}

/** A list message; `text` is set when it went by SMS (the SMS text as sent). */
export interface SentList extends SentCommon {
  readonly kind: 'list';
  readonly listMessages: ListMessages;
  readonly text?: string;
}

/** Reply buttons; `text` is set when they went by SMS. */
export interface SentButtons extends SentCommon {
  readonly kind: 'buttons';
  readonly replyButtons: ReplyButtons;
  readonly text?: string;
}

/** A flow message (with the conversation's token filled in); `text` is set when it went by SMS. */
export interface SentFlow extends SentCommon {
  readonly kind: 'flow';
  readonly flow: FlowBody;
  readonly text?: string;
}

/** Plain text by SMS (on the seed provider, whose messaging endpoint has no text body, every text). */
export interface SentText extends SentCommon {
  readonly kind: 'text';
  readonly channel: 'sms';
  readonly text: string;
}

/** Plain text on WhatsApp (Cloud API `type: text`): a text whose `channel` is `interactive`. */
export interface SentWhatsAppText extends SentCommon {
  readonly kind: 'text';
  readonly channel: 'interactive';
  readonly text: string;
}

/**
 * A template (Cloud API `type: template`). Its choices are its quick replies: with `rendered`, the
 * buttons as the user sees them (id = the payload a tap sends, title = the button's text); without,
 * the payloads the message sets (title = payload: the labels live in WhatsApp Manager). `text` is
 * set when it went by SMS.
 */
export interface SentTemplate extends SentCommon {
  readonly kind: 'template';
  readonly template: TemplateBody;
  /** The template's name. */
  readonly name: string;
  /** Its language code (`en_US`). */
  readonly language: string;
  /** The body's parameters as texts, in order (a currency's or date's fallback value). */
  readonly parameters: readonly string[];
  /** The header's parameter as text (a media header as `[image <link>]`), when it has one. */
  readonly headerParameters: readonly string[];
  /** The message as the user sees it, filled from the template the sandbox knows (its Cloud API mode's templates). */
  readonly rendered?: RenderedTemplate | undefined;
  readonly text?: string;
}

/** An SMS the bot sent on purpose. */
export interface SentSms extends SentCommon {
  readonly kind: 'sms';
  readonly channel: 'sms';
  readonly text: string;
}

/** One message the bot sent, typed by variant, with the seed's body object (list, buttons and flow whichever provider carried them). */
export type SentMessage = SentList | SentButtons | SentFlow | SentTemplate | SentText | SentWhatsAppText | SentSms;

/** True for list, buttons and flow (whatever channel they went by). */
export function isInteractiveSent(s: SentMessage): s is SentList | SentButtons | SentFlow {
  return s.kind === 'list' || s.kind === 'buttons' || s.kind === 'flow';
}

/** True for what a user can answer by tapping: list, buttons, flow, and a template (its quick replies). */
export function isTappableSent(s: SentMessage): s is SentList | SentButtons | SentFlow | SentTemplate {
  return isInteractiveSent(s) || s.kind === 'template';
}

/** Fills a template message from the template the sandbox knows (undefined when it knows none). */
export type TemplateRenderer = (message: AcceptedCloud) => RenderedTemplate | undefined;

/**
 * Adds to `known` (what the bot sent to `user`, oldest first) the messages the sandbox accepted for
 * that user since, each joined with its outbox row by provider id. Returns the longer list.
 */
export async function collectSent(store: Store, user: string, accepted: readonly SandboxMessage[], known: readonly SentMessage[] = [], render?: TemplateRenderer): Promise<SentMessage[]> {
  const after = known.at(-1)?.seq ?? 0;
  const out = [...known];
  for (const m of accepted) {
    if (m.seq <= after || m.to !== user) continue;
    const row = await store.outboundByProviderId(m.providerId);
    // A Cloud API message's row is on the WhatsApp channel, stored as `interactive`.
    const channel = m.channel === 'cloud-api' ? 'interactive' : m.channel;
    out.push(toSent(m, row?.channel === channel ? row : undefined, render));
  }
  return out;
}

/** @internal A message the sandbox accepted, with its outbox row when found, as the harness shows it. */
export function toSent(m: SandboxMessage, row: OutboxRecord | undefined, render?: TemplateRenderer): SentMessage {
  const agent = row?.agent ?? undefined;
  const common = { seq: m.seq, providerId: m.providerId, fallback: row?.fallbackOf !== null && row?.fallbackOf !== undefined, ...(agent !== undefined && { agent }) };
  if (m.channel === 'cloud-api') return cloudSent(m, row, common, render);
  if (m.channel === 'interactive') {
    const message = interactiveMessage(m.request);
    return { ...common, channel: 'interactive', request: m.request, message, choices: choicesOf(message), ...bodyOf(message) };
  }
  const message = (row?.message as Message | undefined) ?? { kind: 'sms', text: m.text };
  const base = { ...common, channel: 'sms' as const, request: m.request, message, choices: choicesOf(message), text: m.text };
  if (message.kind === 'text' || message.kind === 'sms') return { ...base, kind: message.kind };
  if (message.kind === 'template') return { ...base, ...templateOf(message.template) };
  return { ...base, ...bodyOf(message) };
}

type Common = Pick<SentCommon, 'seq' | 'providerId' | 'fallback' | 'agent'>;

/** A Cloud API message, read into the same variants as the seed provider's (see {@link deliveredMessage}). */
function cloudSent(m: AcceptedCloud, row: OutboxRecord | undefined, common: Common, render: TemplateRenderer | undefined): SentMessage {
  const message = deliveredMessage(row?.message, m.request);
  const base = { ...common, channel: 'interactive' as const, request: m.request, message, choices: choicesOf(message) };
  if (message.kind === 'text') return { ...base, kind: 'text', text: message.text };
  if (message.kind !== 'template') return { ...base, ...bodyOf(message) };
  const rendered = render?.(m);
  if (rendered === undefined) return { ...base, ...templateOf(message.template) };
  return { ...base, ...templateOf(message.template), rendered, choices: rendered.buttons.map((b) => ({ id: b.payload, title: b.text })) };
}

function templateOf(t: TemplateBody): Pick<SentTemplate, 'kind' | 'template' | 'name' | 'language' | 'parameters' | 'headerParameters'> {
  const params = templateParameters(t);
  return { kind: 'template', template: t, name: t.name, language: t.language.code, parameters: params.body, headerParameters: params.header };
}

/** The message a messaging request carries, read back from its body. */
function interactiveMessage(req: InteractiveRequest): Message {
  if (req.listMessages) return { kind: 'list', listMessages: req.listMessages };
  if (req.replyButtons) return { kind: 'buttons', replyButtons: req.replyButtons };
  return { kind: 'flow', flow: req.flow! };
}

function bodyOf(m: Message): { kind: 'list'; listMessages: ListMessages } | { kind: 'buttons'; replyButtons: ReplyButtons } | { kind: 'flow'; flow: FlowBody } {
  if (m.kind === 'list') return { kind: 'list', listMessages: m.listMessages };
  if (m.kind === 'buttons') return { kind: 'buttons', replyButtons: m.replyButtons };
  if (m.kind === 'flow') return { kind: 'flow', flow: m.flow };
  throw new Error(`not an interactive message: ${m.kind}`);
}
