/**
 * What the page's user does, posted through the REAL webhook by the sandbox's deliverer, signed
 * like production traffic, and addressed to the bot's own number so inbound routing picks it.
 */
import { z } from 'zod';
import type { Sandbox } from '../../sandbox/api.js';
import type { DeliveryResult } from '../../sandbox/deliver.js';
import { buttonReplyMessage, flowReplyMessage, listReplyMessage, newMessageId, templateButtonMessage, textMessage, type CloudMessage, type InboundInit } from '../../sandbox/inbound.js';
import type { BotInfo } from './bots.js';

const user = z.string().regex(/^[0-9]{6,20}$/, 'must be 6 to 20 digits (country code and number, no "+")');
const key = { bot: z.string().min(1), user };
/** The provider id of the message a tap answers (WhatsApp's `context.id`). */
const context = z.string().min(1).max(512).optional();

/** `POST /simulator/api/text`: the user types. */
export const TextInput = z.strictObject({ ...key, text: z.string().min(1).max(4096) });
/** `POST /simulator/api/sms`: the user sends an SMS. */
export const SmsInput = TextInput;
/** `POST /simulator/api/tap`: the user taps a reply button, a list row or a template's quick reply (`id`: its payload). */
export const TapInput = z.strictObject({
  ...key,
  kind: z.enum(['button', 'list', 'template']),
  id: z.string().min(1).max(256),
  title: z.string().max(256),
  description: z.string().max(256).optional(),
  context,
});
/** `POST /simulator/api/flow`: the user submits a flow's form. */
export const FlowInput = z.strictObject({
  ...key,
  token: z.string().min(1).max(512),
  data: z.record(z.string().min(1).max(200), z.unknown()),
  context,
});

/** What a send answers: the message id posted and what the webhook said. */
export interface Sent {
  readonly id: string;
  readonly delivery: DeliveryResult;
}

/** Posts one user message for `bot` through the sandbox deliverer. */
export class UserSender {
  constructor(private readonly sandbox: Sandbox) {}

  /** Free text. */
  text(bot: BotInfo, i: z.infer<typeof TextInput>): Promise<Sent> {
    return this.#post(bot, textMessage({ ...this.#init(i.user), text: i.text }));
  }

  /** A tap on a button, a row, or a template's quick reply. */
  tap(bot: BotInfo, i: z.infer<typeof TapInput>): Promise<Sent> {
    const init = this.#init(i.user, bot, i.context);
    if (i.kind === 'template') return this.#post(bot, templateButtonMessage({ ...init, payload: i.id, text: i.title }));
    const m = i.kind === 'button' ? buttonReplyMessage({ ...init, buttonId: i.id, title: i.title }) : listReplyMessage({ ...init, rowId: i.id, title: i.title, description: i.description });
    return this.#post(bot, m);
  }

  /** A completed flow: `nfm_reply` with `response_json` = `{flow_token, ...data}`. */
  flow(bot: BotInfo, i: z.infer<typeof FlowInput>): Promise<Sent> {
    return this.#post(bot, flowReplyMessage({ ...this.#init(i.user, bot, i.context), flowToken: i.token, data: i.data }));
  }

  /** An SMS to the bot's number (the inbound SMS webhook). */
  async sms(bot: BotInfo, i: z.infer<typeof SmsInput>): Promise<Sent> {
    const id = `sms.${newMessageId().slice(6)}`;
    return { id: `sms:${id}`, delivery: await this.sandbox.deliver.sms(i.user, i.text, { to: bot.number, id }) };
  }

  #init(from: string, bot?: BotInfo, replied?: string): InboundInit {
    return { from, id: newMessageId(), ...(bot && replied !== undefined && { context: { from: bot.number, id: replied } }) };
  }

  /** Through the deliverer, to the bot's number (the sandbox fills in that number's `phone_number_id` and opens the user's window). */
  async #post(bot: BotInfo, message: CloudMessage): Promise<Sent> {
    return { id: message.id, delivery: await this.sandbox.deliver.message(message, { to: bot.number, name: 'Simulator' }) };
  }
}
