/**
 * Template messages (WhatsApp Cloud API `type: "template"`): a message approved in advance in the
 * WhatsApp Manager, the only kind WhatsApp delivers once 24 hours have passed since the user last
 * wrote. The shapes are the Cloud API's own (`components` with `parameters`), validated here.
 */
import { z } from 'zod';
import { idProblem } from '../storable.js';
import { charLength } from './limits.js';

function text(max: number) {
  return z.string().superRefine((s, ctx) => {
    const n = charLength(s);
    if (n < 1) ctx.addIssue({ code: 'custom', message: 'must not be empty' });
    if (n > max) ctx.addIssue({ code: 'custom', message: `must be at most ${max} characters (has ${n})` });
  });
}

const media = z.union([z.strictObject({ link: z.url({ protocol: /^https$/, error: 'must be an https URL' }) }), z.strictObject({ id: text(128) })]);
const documentMedia = z.union([
  z.strictObject({ link: z.url({ protocol: /^https$/, error: 'must be an https URL' }), filename: text(240).optional() }),
  z.strictObject({ id: text(128), filename: text(240).optional() }),
]);

/** A parameter of a template's header or body. */
export const TemplateParameterSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('text'),
    text: text(1024),
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

/** A quick-reply button's payload: it comes back as the id of a `reply.<payload>` event, so it obeys the ids' rules. */
const payload = text(256).superRefine((s, ctx) => {
  const problem = idProblem(s, Number.POSITIVE_INFINITY);
  if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
});

const index = z.union([z.string().regex(/^[0-9]$/, 'must be "0" to "9"'), z.number().int().min(0).max(9)]);

/** One component of a template: its header's, its body's or one button's parameters. */
export const TemplateComponentSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('header'),
    parameters: z
      .array(TemplateParameterSchema)
      .min(1)
      .max(1, 'a header takes one parameter')
      .superRefine((ps, ctx) => {
        const p = ps[0];
        if (p?.type === 'text' && charLength(p.text) > 60) ctx.addIssue({ code: 'custom', path: [0, 'text'], message: `a header's text must be at most 60 characters (has ${charLength(p.text)})` });
      }),
  }),
  z.strictObject({ type: z.literal('body'), parameters: z.array(TemplateParameterSchema).min(1).max(100) }),
  z.discriminatedUnion('sub_type', [
    z.strictObject({
      type: z.literal('button'),
      sub_type: z.literal('quick_reply'),
      index,
      parameters: z.array(z.strictObject({ type: z.literal('payload'), payload })).length(1, 'a quick-reply button takes one payload'),
    }),
    z.strictObject({
      type: z.literal('button'),
      sub_type: z.literal('url'),
      index,
      parameters: z.array(z.strictObject({ type: z.literal('text'), text: text(2000) })).length(1, 'a URL button takes one text parameter'),
    }),
  ]),
]);

/** The `template` object of a Cloud API template message. */
export const TemplateSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9_]{1,512}$/, 'must be the template\u2019s name: lower-case letters, digits and "_"'),
    language: z.strictObject({ code: z.string().regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'must be a language code such as "en" or "en_US"'), policy: z.literal('deterministic').optional() }),
    components: z.array(TemplateComponentSchema).optional(),
  })
  .superRefine((t, ctx) => {
    const comps: unknown[] = Array.isArray(t.components) ? t.components : [];
    const seen = new Set<string>();
    comps.forEach((c, i) => {
      if (typeof c !== 'object' || c === null) return;
      const o = c as Record<string, unknown>;
      const key = o['type'] === 'button' ? `button ${String(o['index'])}` : String(o['type']);
      if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['components', i], message: `only one ${key} component is allowed` });
      seen.add(key);
    });
  });

export type TemplateParameter = z.infer<typeof TemplateParameterSchema>;
export type TemplateComponent = z.infer<typeof TemplateComponentSchema>;
export type TemplateBody = z.infer<typeof TemplateSchema>;

/** The quick-reply payloads a template carries, in button order: each comes back as `reply.<payload>`. */
export function templatePayloads(t: TemplateBody): string[] {
  return (t.components ?? [])
    .filter((c): c is Extract<TemplateComponent, { sub_type: 'quick_reply' }> => c.type === 'button' && c.sub_type === 'quick_reply')
    .sort((a, b) => Number(a.index) - Number(b.index))
    .map((c) => c.parameters[0]!.payload);
}
