/**
 * The field rules of the Cloud API's message reference, written here from Meta's documentation and
 * not from Colloquy's own builders, so the sandbox catches their mistakes.
 */
import { z } from 'zod';

/** Characters as WhatsApp counts them: code points, not UTF-16 units. */
export function chars(s: string): number {
  return [...s].length;
}

/** A non-empty string of at most `max` characters. */
export function text(max: number) {
  return z.string().superRefine((s, ctx) => {
    const n = chars(s);
    if (n < 1) ctx.addIssue({ code: 'custom', message: 'must not be empty' });
    if (n > max) ctx.addIssue({ code: 'custom', message: `must be at most ${max} characters (has ${n})` });
  });
}

/** A string of at most `max` characters with no emoji (Meta: a flow's `flow_cta`). */
export function plainText(max: number) {
  return text(max).refine((s) => !/\p{Extended_Pictographic}/u.test(s), 'must not contain emoji');
}

const link = z.string().refine((s) => /^https?:\/\/[^\s/]+/i.test(s), 'must be an http(s) URL');

/** A media object: a public http(s) `link` or an uploaded media `id`, not both. */
export const media = z.union([z.strictObject({ link }), z.strictObject({ id: text(128) })], { error: 'must be {link} or {id}' });

/** A document: {@link media} with an optional `filename`. */
export const documentMedia = z.union([z.strictObject({ link, filename: text(240).optional() }), z.strictObject({ id: text(128), filename: text(240).optional() })], {
  error: 'must be {link} or {id}, with an optional filename',
});

/** A user's number as the sandbox accepts it in `to`: digits only. */
export const recipient = z.string().regex(/^[0-9]{6,20}$/, 'must be the user\u2019s number, 6 to 20 digits');

/** What every message body carries besides its content. */
export const envelope = {
  messaging_product: z.literal('whatsapp'),
  recipient_type: z.literal('individual').optional(),
  to: recipient,
  context: z.strictObject({ message_id: text(256) }).optional(),
  biz_opaque_callback_data: text(512).optional(),
};

/** `footer: {text}` (at most 60 characters). */
export const footer = z.strictObject({ text: text(60) });

/** The ids in a list that are not unique, as issues at `path(index)`. */
export function duplicates(values: readonly string[], path: (index: number) => (string | number)[], what: string, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  values.forEach((v, i) => {
    if (seen.has(v)) ctx.addIssue({ code: 'custom', path: path(i), message: `${what} "${v}" is used more than once` });
    seen.add(v);
  });
}
