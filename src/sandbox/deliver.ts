/**
 * Simulated inbound traffic: builds provider.md §2 payloads and POSTs them to the configured
 * webhook, signed when a secret is set. Uses Node's global fetch (only transport/ imports undici).
 */
import { ColloquyError, ConfigError } from '../errors.js';
import {
  SIGNATURE_HEADER,
  buttonReplyMessage,
  flowReplyMessage,
  imageMessage,
  inboundSms,
  listReplyMessage,
  signBody,
  statusUpdate,
  templateButtonMessage,
  textMessage,
  webhookPayload,
  type BusinessInit,
  type CloudError,
  type CloudMessage,
  type DeliveryStatus,
  type InboundInit,
} from './inbound.js';
import type { SandboxClock, WebhookTarget } from './types.js';

/** What the webhook answered to one delivery. */
export interface DeliveryResult {
  readonly url: string;
  readonly status: number;
  readonly ok: boolean;
  /** The answer's body, as text. */
  readonly body: string;
  /** What was posted. */
  readonly payload: unknown;
}

/** Options of a simulated user message. */
export interface MessageOptions {
  readonly id?: string | undefined;
  /** The message replied to; taps default to the last interactive message sent to the user. */
  readonly context?: InboundInit['context'];
  /** The user's profile name. */
  readonly name?: string | undefined;
  /**
   * The business number written to: a display number or a Cloud API `phone_number_id` of the
   * sandbox (webhook `metadata` then carries both), or any number. Default: for a tap, the number
   * the tapped message came from; otherwise the sandbox's business number.
   */
  readonly to?: string | undefined;
}

/** What a {@link Deliverer} needs from its sandbox. */
export interface DelivererDeps {
  readonly target: () => WebhookTarget | undefined;
  readonly clock: SandboxClock;
  readonly business: Required<{ [K in keyof BusinessInit]: string }>;
  /** The number a provider message id went to. */
  readonly recipientOf: (providerId: string) => string | undefined;
  /** The id of the last interactive message sent to a number. */
  readonly lastInteractiveTo: (number: string) => string | undefined;
  /** The number an interactive or Cloud API message was sent from. */
  readonly senderOf: (providerId: string) => string | undefined;
  /** The id of the last template message sent to a number. */
  readonly lastTemplateTo: (number: string) => string | undefined;
  /** A Cloud API business number by display number or `phone_number_id`. */
  readonly numberOf: (number: string) => { readonly phoneNumberId: string; readonly displayNumber: string } | undefined;
  /** Sees every Cloud API payload before it is posted (the 24-hour windows open here). */
  readonly observe: (payload: unknown) => void;
  readonly fetch: typeof fetch;
  readonly timeoutMs: number;
}

/** Posts simulated user messages, statuses and SMS to the webhook. */
export class Deliverer {
  readonly #deps: DelivererDeps;

  constructor(deps: DelivererDeps) {
    this.#deps = deps;
  }

  /** The user types `text`. */
  text(from: string, text: string, options: MessageOptions = {}): Promise<DeliveryResult> {
    return this.message(textMessage({ ...this.#init(from, options, false), text }), options);
  }

  /** The user taps the reply button `id` titled `title`. */
  buttonReply(from: string, reply: { readonly id: string; readonly title: string }, options: MessageOptions = {}): Promise<DeliveryResult> {
    return this.message(buttonReplyMessage({ ...this.#init(from, options, true), buttonId: reply.id, title: reply.title }), options);
  }

  /**
   * The user taps a template's quick-reply button: `payload` is what the template message set for
   * it (or the button's text when it set none), `text` the button's text. Replies to the last
   * template sent to the user unless `options.context` says otherwise.
   */
  templateReply(from: string, payload: string, text: string, options: MessageOptions = {}): Promise<DeliveryResult> {
    const replied = this.#deps.lastTemplateTo(from);
    const context = options.context ?? (replied === undefined ? undefined : { from: this.#deps.senderOf(replied) ?? this.#deps.business.displayPhoneNumber, id: replied });
    const init = { from, id: options.id, at: this.#deps.clock.now(), context };
    return this.message(templateButtonMessage({ ...init, payload, text }), options);
  }

  /** The user picks the list row `id`. */
  listReply(from: string, reply: { readonly id: string; readonly title: string; readonly description?: string | undefined }, options: MessageOptions = {}): Promise<DeliveryResult> {
    const row = { rowId: reply.id, title: reply.title, description: reply.description };
    return this.message(listReplyMessage({ ...this.#init(from, options, true), ...row }), options);
  }

  /** The user completes a flow started with `flowToken`, answering `data`. */
  flowReply(from: string, reply: { readonly flowToken: string; readonly data?: Readonly<Record<string, unknown>> | undefined }, options: MessageOptions = {}): Promise<DeliveryResult> {
    return this.message(flowReplyMessage({ ...this.#init(from, options, true), flowToken: reply.flowToken, data: reply.data }), options);
  }

  /** The user sends a photo. */
  image(from: string, image: { readonly caption?: string | undefined; readonly mimeType?: string | undefined } = {}, options: MessageOptions = {}): Promise<DeliveryResult> {
    return this.message(imageMessage({ ...this.#init(from, options, false), caption: image.caption, mimeType: image.mimeType }), options);
  }

  /** Posts one prepared message in an envelope, to `options.to`, else the number a tap answers, else the business number. */
  message(message: CloudMessage, options: Pick<MessageOptions, 'name' | 'to'> = {}): Promise<DeliveryResult> {
    const names = options.name === undefined ? undefined : { [message.from]: options.name };
    const to = options.to ?? message.context?.from ?? this.#deps.business.displayPhoneNumber;
    return this.payload(webhookPayload({ ...this.#business(to), messages: [message], names }));
  }

  /**
   * A delivery status for a message the sandbox accepted (or any id, given its recipient), about
   * the number the message was sent from unless `to` says otherwise.
   */
  async status(
    providerId: string,
    status: DeliveryStatus,
    options: { readonly recipient?: string | undefined; readonly errors?: readonly CloudError[] | undefined; readonly to?: string | undefined } = {},
  ): Promise<DeliveryResult> {
    const recipient = options.recipient ?? this.#deps.recipientOf(providerId);
    if (recipient === undefined) throw new ConfigError('recipient', `no message with id "${providerId}" was sent through the sandbox: give the recipient`);
    const update = statusUpdate({ id: providerId, status, recipient, at: this.#deps.clock.now(), errors: options.errors });
    const to = options.to ?? this.#deps.senderOf(providerId) ?? this.#deps.business.displayPhoneNumber;
    return this.payload(webhookPayload({ ...this.#business(to), statuses: [update] }));
  }

  /** The user sends an SMS (to the business number unless `to` is given). */
  sms(from: string, text: string, options: { readonly to?: string | undefined; readonly id?: string | undefined } = {}): Promise<DeliveryResult> {
    const sms = inboundSms({ from, text, to: options.to ?? this.#deps.business.displayPhoneNumber, id: options.id, at: this.#deps.clock.now() });
    return this.payload(sms, { sms: true });
  }

  /** Posts any payload as is, to the Cloud API webhook or (with `sms`) the SMS webhook. */
  async payload(payload: unknown, options: { readonly sms?: boolean } = {}): Promise<DeliveryResult> {
    const target = this.#deps.target();
    if (target === undefined) throw new ConfigError('webhook', 'no webhook is configured: pass `webhook` to createSandbox() or call setWebhook()');
    const url = options.sms === true ? (target.smsUrl ?? smsUrlOf(target.url)) : target.url;
    if (options.sms !== true) this.#deps.observe(payload);
    return this.#post(url, payload, target.secret);
  }

  /** The envelope's business fields for the number written to: a known number's id and display number. */
  #business(to: string): DelivererDeps['business'] {
    const n = this.#deps.numberOf(to);
    if (n === undefined) return { ...this.#deps.business, displayPhoneNumber: to };
    return { ...this.#deps.business, displayPhoneNumber: n.displayNumber, phoneNumberId: n.phoneNumberId };
  }

  #init(from: string, options: MessageOptions, tap: boolean): InboundInit {
    const replied = tap ? this.#deps.lastInteractiveTo(from) : undefined;
    const context = options.context ?? (replied === undefined ? undefined : { from: this.#deps.senderOf(replied) ?? this.#deps.business.displayPhoneNumber, id: replied });
    return { from, id: options.id, at: this.#deps.clock.now(), context };
  }

  async #post(url: string, payload: unknown, secret: string | undefined): Promise<DeliveryResult> {
    const raw = JSON.stringify(payload);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'colloquy-sandbox' };
    if (secret !== undefined) headers[SIGNATURE_HEADER] = signBody(secret, raw);
    try {
      const res = await this.#deps.fetch(url, { method: 'POST', headers, body: raw, signal: AbortSignal.timeout(this.#deps.timeoutMs) });
      return { url, status: res.status, ok: res.ok, body: await res.text(), payload };
    } catch (err) {
      throw new ColloquyError('sandbox_delivery', `The sandbox could not deliver to ${url}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  }
}

/** The inbound SMS webhook beside a Cloud API webhook: `/webhook` → `/webhook/sms`. */
export function smsUrlOf(webhookUrl: string): string {
  const url = new URL(webhookUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/sms`;
  return url.toString();
}
