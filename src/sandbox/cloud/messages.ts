/** The Cloud API message bodies the sandbox accepts: text, template, interactive and read receipts. */
import { z } from 'zod';
import { documentMedia, envelope, media, text } from './fields.js';
import { INTERACTIVE_SCHEMAS, interactiveMessage } from './interactive.js';

/** `type: "text"`. */
export const TextMessage = z.strictObject({
  ...envelope,
  type: z.literal('text').optional(),
  text: z.strictObject({ body: text(4096), preview_url: z.boolean().optional() }),
});

/** A template's text parameter: no new lines or tabs, no more than four spaces in a row (Meta). */
const parameterText = text(1024)
  .refine((s) => !/[\n\t]/.test(s), 'must not contain new lines or tabs')
  .refine((s) => !/ {5,}/.test(s), 'must not contain more than four spaces in a row');

const parameter = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('text'),
    text: parameterText,
    parameter_name: z
      .string()
      .regex(/^[a-z0-9_]{1,64}$/, 'must be lower-case letters, digits or "_"')
      .optional(),
  }),
  z.strictObject({
    type: z.literal('currency'),
    currency: z.strictObject({ fallback_value: text(100), code: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code'), amount_1000: z.number().int() }),
  }),
  z.strictObject({ type: z.literal('date_time'), date_time: z.strictObject({ fallback_value: text(100) }) }),
  z.strictObject({ type: z.literal('image'), image: media }),
  z.strictObject({ type: z.literal('video'), video: media }),
  z.strictObject({ type: z.literal('document'), document: documentMedia }),
]);

const index = z.union([z.string().regex(/^[0-9]$/, 'must be "0" to "9"'), z.number().int().min(0).max(9)]);

const component = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('header'), parameters: z.array(parameter).min(1).max(1, 'a header takes one parameter') }),
  z.strictObject({ type: z.literal('body'), parameters: z.array(parameter).min(1) }),
  z.strictObject({
    type: z.literal('button'),
    sub_type: z.enum(['quick_reply', 'url']),
    index,
    parameters: z
      .array(z.union([z.strictObject({ type: z.literal('payload'), payload: text(256) }), z.strictObject({ type: z.literal('text'), text: text(2000) })]))
      .length(1, 'a button takes one parameter'),
  }),
]);

/** `type: "template"`. */
export const TemplateMessage = z.strictObject({
  ...envelope,
  type: z.literal('template'),
  template: z.strictObject({
    name: z.string().regex(/^[a-z0-9_]{1,512}$/, 'must be a template name: lower-case letters, digits and "_"'),
    language: z.strictObject({ code: z.string().regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'must be a language code such as "en" or "en_US"'), policy: z.literal('deterministic').optional() }),
    components: z.array(component).optional(),
  }),
});

/** A read receipt, with the typing indicator or without. */
export const ReadReceipt = z.strictObject({
  messaging_product: z.literal('whatsapp'),
  status: z.literal('read'),
  message_id: text(256),
  typing_indicator: z.strictObject({ type: z.literal('text') }).optional(),
});

export type TemplateRequest = z.infer<typeof TemplateMessage>['template'];
export type TemplateComponentRequest = NonNullable<TemplateRequest['components']>[number];

/** A body's kind, as recorded (`text`, `template`, `interactive:list`…), and the schema it must obey. */
export type Shape = { readonly kind: string; readonly schema: z.ZodType } | { readonly kind: 'unsupported'; readonly path: (string | number)[]; readonly message: string };

/** Picks the schema for a message body by its `type` (and `interactive.type`). */
export function shapeOf(body: Record<string, unknown>): Shape {
  if (body['status'] !== undefined) return { kind: 'read', schema: ReadReceipt };
  const type = body['type'] ?? 'text';
  if (type === 'text') return { kind: 'text', schema: TextMessage };
  if (type === 'template') return { kind: 'template', schema: TemplateMessage };
  if (type !== 'interactive') return { kind: 'unsupported', path: ['type'], message: `the sandbox does not take messages of type ${JSON.stringify(type)} (it takes text, template and interactive)` };
  const inner = body['interactive'];
  const kind = typeof inner === 'object' && inner !== null ? (inner as Record<string, unknown>)['type'] : undefined;
  if (typeof kind === 'string' && Object.hasOwn(INTERACTIVE_SCHEMAS, kind)) {
    return { kind: `interactive:${kind}`, schema: interactiveMessage(kind as keyof typeof INTERACTIVE_SCHEMAS) };
  }
  return { kind: 'unsupported', path: ['interactive', 'type'], message: `must be "list", "button" or "flow" (got ${JSON.stringify(kind)})` };
}
