/** `POST /_sandbox/deliver`: simulated inbound traffic described as JSON, one `kind` at a time. */
import { z } from 'zod';
import type { Deliverer, DeliveryResult, MessageOptions } from './deliver.js';
import { parseBody } from './control-input.js';

const user = z.string().regex(/^[0-9]{6,20}$/, 'must be digits only');
const message = {
  from: user,
  messageId: z.string().min(1).optional(),
  name: z.string().optional(),
  context: z.strictObject({ from: z.string(), id: z.string() }).optional(),
  to: user.optional(),
};
const cloudError = z.strictObject({ code: z.number().int(), title: z.string(), message: z.string().optional(), error_data: z.strictObject({ details: z.string() }) });

/** The JSON `POST /_sandbox/deliver` accepts. */
export const DeliverBody = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('text'), ...message, text: z.string() }),
  z.strictObject({ kind: z.literal('button_reply'), ...message, buttonId: z.string(), title: z.string() }),
  z.strictObject({ kind: z.literal('list_reply'), ...message, rowId: z.string(), title: z.string(), description: z.string().optional() }),
  z.strictObject({ kind: z.literal('flow_reply'), ...message, flowToken: z.string(), data: z.record(z.string(), z.unknown()).optional() }),
  z.strictObject({ kind: z.literal('template_reply'), ...message, payload: z.string().min(1), text: z.string().min(1) }),
  z.strictObject({ kind: z.literal('image'), ...message, caption: z.string().optional(), mimeType: z.string().optional() }),
  z.strictObject({
    kind: z.literal('status'),
    providerId: z.string(),
    status: z.enum(['sent', 'delivered', 'read', 'failed']),
    recipient: user.optional(),
    to: user.optional(),
    errors: z.array(cloudError).optional(),
  }),
  z.strictObject({ kind: z.literal('sms'), from: user, text: z.string(), to: user.optional(), messageId: z.string().optional() }),
  z.strictObject({ kind: z.literal('payload'), payload: z.unknown(), sms: z.boolean().optional() }),
]);

/** What `POST /_sandbox/deliver` accepts, as a type. */
export type DeliverRequest = z.infer<typeof DeliverBody>;

/** Delivers what a JSON description asks for. */
export function deliverFromJson(deliver: Deliverer, json: unknown): Promise<DeliveryResult> {
  const b = parseBody(DeliverBody, json);
  switch (b.kind) {
    case 'status':
      return deliver.status(b.providerId, b.status, { recipient: b.recipient, errors: b.errors, to: b.to });
    case 'sms':
      return deliver.sms(b.from, b.text, { to: b.to, id: b.messageId });
    case 'payload':
      return deliver.payload(b.payload, { sms: b.sms ?? false });
    default:
      return deliverMessage(deliver, b);
  }
}

function deliverMessage(deliver: Deliverer, b: Exclude<DeliverRequest, { kind: 'status' | 'sms' | 'payload' }>): Promise<DeliveryResult> {
  const options: MessageOptions = { id: b.messageId, name: b.name, context: b.context, to: b.to };
  switch (b.kind) {
    case 'text':
      return deliver.text(b.from, b.text, options);
    case 'button_reply':
      return deliver.buttonReply(b.from, { id: b.buttonId, title: b.title }, options);
    case 'list_reply':
      return deliver.listReply(b.from, { id: b.rowId, title: b.title, description: b.description }, options);
    case 'flow_reply':
      return deliver.flowReply(b.from, { flowToken: b.flowToken, data: b.data }, options);
    case 'template_reply':
      return deliver.templateReply(b.from, b.payload, b.text, options);
    case 'image':
      return deliver.image(b.from, { caption: b.caption, mimeType: b.mimeType }, options);
  }
}
