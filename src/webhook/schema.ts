/**
 * Zod schemas of what the webhook receives (provider.md §2): the Cloud API envelope with its
 * messages and statuses, and our inbound SMS. Objects are loose (unknown fields are kept, so a raw
 * message is stored whole); a message's own fields are checked by its `type`, and a type we do not
 * know is accepted as it is, so it reaches the bot as `unsupported` instead of being refused.
 */
import { z } from 'zod';
import { idProblem, MAX_ID_LENGTH, MAX_STATUS_LENGTH } from '../storable.js';
import { flowsChangeSchema } from './flow-alerts.js';

/** A phone number: digits, optionally after a `+`. */
const phone = z.string().regex(/^\+?[0-9]{5,20}$/, 'must be a phone number: digits only, with the country code');

/** A Cloud API timestamp: whole seconds since the epoch, as a string (or a number). */
const timestamp = z.union([z.string().regex(/^[0-9]{1,15}$/, 'must be whole seconds since the epoch'), z.number().int().nonnegative()]);

const nonEmpty = z.string().min(1, 'must not be empty');

/** An id the stores keep in a column of its own (and look rows up by): see storable.ts. */
const id = (max = MAX_ID_LENGTH) =>
  z.string().superRefine((value, ctx) => {
    const problem = value === '' ? 'must not be empty' : idProblem(value, max);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
/** Like {@link id}, but empty is allowed (fields the schema always let be empty). */
const idOrEmpty = z.string().superRefine((value, ctx) => {
  const problem = idProblem(value);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const messageBase = z.looseObject({
  from: phone,
  id: id(),
  timestamp,
  type: nonEmpty,
  context: z.looseObject({ from: idOrEmpty.optional(), id: idOrEmpty.optional() }).optional(),
});

const textMessage = messageBase.extend({ type: z.literal('text'), text: z.looseObject({ body: z.string() }) });

/** A tap on a template's quick-reply button: its `payload` (the id the template set) and its text. */
const buttonMessage = messageBase.extend({ type: z.literal('button'), button: z.looseObject({ payload: id(), text: z.string().optional() }) });

const buttonReply = z.looseObject({ type: z.literal('button_reply'), button_reply: z.looseObject({ id: id(), title: z.string() }) });
const listReply = z.looseObject({
  type: z.literal('list_reply'),
  list_reply: z.looseObject({ id: id(), title: z.string(), description: z.string().optional() }),
});

/** `response_json` must be a JSON object holding the flow's `flow_token`. */
const responseJson = z.string().superRefine((text, ctx) => {
  const parsed = parseResponseJson(text);
  if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
});

const nfmReply = z.looseObject({
  type: z.literal('nfm_reply'),
  nfm_reply: z.looseObject({ name: z.string().optional(), body: z.string().optional(), response_json: responseJson }),
});

const interactive = z.looseObject({ type: nonEmpty }).superRefine(byType({ button_reply: buttonReply, list_reply: listReply, nfm_reply: nfmReply }));
const interactiveMessage = messageBase.extend({ type: z.literal('interactive'), interactive });

/** One inbound message; fields beyond the common ones are checked for `text`, `interactive` and `button`. */
export const messageSchema = messageBase.superRefine(byType({ text: textMessage, interactive: interactiveMessage, button: buttonMessage }));

/** A delivery status of a message we sent. */
export const statusSchema = z.looseObject({
  id: id(),
  status: id(MAX_STATUS_LENGTH),
  timestamp,
  recipient_id: idOrEmpty,
  errors: z.array(z.looseObject({ code: z.union([z.number(), z.string()]).optional(), title: z.string().optional() })).optional(),
});

/** The `value` of a `messages` change. */
export const messagesValueSchema = z.looseObject({
  messaging_product: z.string().optional(),
  metadata: z.looseObject({ display_phone_number: nonEmpty, phone_number_id: idOrEmpty.optional() }),
  contacts: z.array(z.looseObject({ wa_id: idOrEmpty.optional() })).optional(),
  messages: z.array(messageSchema).optional(),
  statuses: z.array(statusSchema).optional(),
});

/**
 * A change: `messages` changes are checked, and a `flows` change's value must be an object (its
 * fields are read leniently, flow-alerts.ts); other fields (account updates…) are let through and ignored.
 */
const changeSchema = z.looseObject({ field: nonEmpty, value: z.unknown() }).superRefine(byType({ messages: z.looseObject({ value: messagesValueSchema }), flows: flowsChangeSchema }, 'field'));

/** The Cloud API webhook envelope. */
export const envelopeSchema = z.looseObject({
  object: z.literal('whatsapp_business_account'),
  entry: z.array(z.looseObject({ id: idOrEmpty, changes: z.array(changeSchema) })),
});

/** Our inbound SMS (provider.md §2). */
export const smsSchema = z.looseObject({ id: id(), from: phone, to: phone, text: z.string(), timestamp: timestamp.optional() });

export type CloudMessage = z.infer<typeof messageSchema>;
export type TextMessage = z.infer<typeof textMessage>;
export type InteractiveMessage = z.infer<typeof interactiveMessage>;
export type ButtonReply = z.infer<typeof buttonReply>;
export type ButtonMessage = z.infer<typeof buttonMessage>;
export type ListReply = z.infer<typeof listReply>;
export type NfmReply = z.infer<typeof nfmReply>;
export type CloudStatus = z.infer<typeof statusSchema>;
export type MessagesValue = z.infer<typeof messagesValueSchema>;
export type Envelope = z.infer<typeof envelopeSchema>;
export type InboundSmsBody = z.infer<typeof smsSchema>;

/** A flow's answers: its `flow_token` and the rest. */
export interface FlowAnswer {
  readonly token: string;
  readonly data: Record<string, unknown>;
}

/** Parses `nfm_reply.response_json`; a string is the reason it is bad. */
export function parseResponseJson(text: string): FlowAnswer | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return 'response_json is not valid JSON';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'response_json must hold a JSON object';
  const { flow_token: token, ...data } = parsed as Record<string, unknown>;
  if (typeof token !== 'string' || token === '') return 'response_json has no flow_token';
  // The token finds the conversation (a lookup by a column of its own): what a column cannot hold is
  // refused like an id's, but not its length: a lookup takes any, and a bot may send up to 512.
  const problem = idProblem(token, Number.POSITIVE_INFINITY);
  if (problem !== undefined) return `response_json's flow_token ${problem}`;
  return { token, data };
}

/**
 * A refinement that checks a loose object further with the schema chosen by its discriminator
 * (`type` by default), reporting the chosen schema's issues at their own paths. Unknown
 * discriminators pass.
 */
function byType(cases: Readonly<Record<string, z.ZodType>>, key = 'type') {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx): void => {
    const tag = value[key];
    const schema = typeof tag === 'string' && Object.hasOwn(cases, tag) ? cases[tag] : undefined;
    if (!schema) return;
    const result = schema.safeParse(value);
    if (result.success) return;
    for (const issue of result.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  };
}
