/**
 * Zod schemas of the provider's request bodies, with the seed's exact field names
 * (seed §2.1–2.4) and the limits of provider.md §3. The TypeScript types come from these.
 */
import { z } from 'zod';
import { idProblem } from '../storable.js';
import { LIMITS, MEDIA_EXTENSIONS, charLength } from './limits.js';

const digits = z.string().regex(/^[0-9]{6,20}$/, 'must be digits only (country code and number, no "+"), 6 to 20 of them');

function text(max: number, opts: { min?: number } = {}) {
  const min = opts.min ?? 1;
  return z.string().superRefine((s, ctx) => {
    const n = charLength(s);
    if (n < min) ctx.addIssue({ code: 'custom', message: min === 1 ? 'must not be empty' : `must be at least ${min} characters` });
    if (n > max) ctx.addIssue({ code: 'custom', message: `must be at most ${max} characters (has ${n})` });
  });
}

/**
 * An id the user's tap sends back (a button's, a list row's) or a flow token: {@link text}'s limits,
 * and nothing the webhook would refuse when it comes back (a control character, an unpaired
 * surrogate), so a bot can never offer a choice whose tap is lost.
 */
function idText(max: number) {
  return text(max).superRefine((s, ctx) => {
    const problem = idProblem(s, Number.POSITIVE_INFINITY);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
}

function extensionOf(value: string): string | undefined {
  const base = value.split(/[?#]/)[0] ?? '';
  const last = base.split('/').pop() ?? '';
  const dot = last.lastIndexOf('.');
  return dot > 0 ? last.slice(dot + 1).toLowerCase() : undefined;
}

function httpsLink(kind: keyof typeof MEDIA_EXTENSIONS) {
  return z.string().superRefine((s, ctx) => {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute https URL' });
      return;
    }
    if (url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: `must be an https URL (got ${url.protocol.replace(':', '')})` });
    const ext = extensionOf(url.pathname);
    const allowed: readonly string[] = MEDIA_EXTENSIONS[kind];
    if (ext !== undefined && !allowed.includes(ext)) {
      ctx.addIssue({ code: 'custom', message: `a ${kind} header must be ${allowed.join(', ')} (link ends in .${ext})` });
    }
  });
}

/** Pictographs, plus what builds emoji out of ordinary characters: flags (regional indicator pairs),
 *  keycaps (`1️⃣`) and the emoji presentation selector. */
const emoji = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3|\uFE0F/u;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Zod skips an object's refinements once a field has a type error (a missing or mistyped field).
 * Ours cross-check fields (one body object, unique ids, section titles…) and must report their
 * problems together with the others, so they run whenever the value is an object, and are written
 * to cope with a value that is only partly valid.
 */
const always = { when: (payload: { value: unknown }) => isObject(payload.value) };

export const RowSchema = z.strictObject({
  id: idText(LIMITS.list.rowId),
  title: text(LIMITS.list.rowTitle),
  description: text(LIMITS.list.rowDescription).optional(),
});

export const SectionSchema = z.strictObject({
  title: text(LIMITS.list.sectionTitle).optional(),
  messages: z.array(RowSchema).min(1, 'a section needs at least one row'),
});

export const ListMessagesSchema = z
  .strictObject({
    headerText: text(LIMITS.list.headerText).optional(),
    body: text(LIMITS.list.body),
    footer: text(LIMITS.list.footer).optional(),
    buttonText: text(LIMITS.list.buttonText),
    // The maximum is checked in the refinement below: zod stops at an array over its `.max()`
    // without looking at the items, which would hide their problems.
    sections: z.array(SectionSchema).min(LIMITS.list.sections.min, 'a list needs at least one section'),
  })
  .superRefine((list, ctx) => {
    // Runs even when a field is malformed (see `always`), so the value may be only partly valid.
    const sections: unknown[] = Array.isArray(list.sections) ? list.sections : [];
    const rowsOf = (s: unknown): unknown[] => (isObject(s) && Array.isArray(s['messages']) ? s['messages'] : []);
    if (sections.length > LIMITS.list.sections.max) {
      ctx.addIssue({ code: 'custom', path: ['sections'], message: `a list has at most ${LIMITS.list.sections.max} sections (has ${sections.length})` });
    }
    const total = sections.reduce<number>((n, s) => n + rowsOf(s).length, 0);
    if (total > LIMITS.list.rowsTotal.max) {
      ctx.addIssue({ code: 'custom', path: ['sections'], message: `a list has at most ${LIMITS.list.rowsTotal.max} rows in all sections (has ${total})` });
    }
    if (sections.length > 1) {
      sections.forEach((s, i) => {
        if (isObject(s) && s['title'] === undefined) ctx.addIssue({ code: 'custom', path: ['sections', i, 'title'], message: 'is required when a list has more than one section' });
      });
    }
    const seen = new Map<string, string>();
    sections.forEach((s, i) =>
      rowsOf(s).forEach((row, j) => {
        const id = isObject(row) ? row['id'] : undefined;
        if (typeof id !== 'string') return;
        const here = `sections[${i}].messages[${j}]`;
        const first = seen.get(id);
        if (first !== undefined) ctx.addIssue({ code: 'custom', path: ['sections', i, 'messages', j, 'id'], message: `duplicate row id "${id}" (also at ${first})` });
        else seen.set(id, here);
      }),
    );
  }, always);

export const ButtonSchema = z.strictObject({
  id: idText(LIMITS.buttons.id),
  title: text(LIMITS.buttons.title),
});

export const HeaderImageSchema = z.strictObject({ link: httpsLink('image') });
export const HeaderVideoSchema = z.strictObject({ link: httpsLink('video') });
export const HeaderDocumentSchema = z.strictObject({
  link: httpsLink('document'),
  fileName: text(LIMITS.buttons.fileName).superRefine((name, ctx) => {
    const ext = extensionOf(name);
    const allowed: readonly string[] = MEDIA_EXTENSIONS.document;
    if (ext !== undefined && !allowed.includes(ext)) ctx.addIssue({ code: 'custom', message: `a document must be ${allowed.join(', ')} (name ends in .${ext})` });
  }),
});

export const ReplyButtonsSchema = z
  .strictObject({
    headerImage: HeaderImageSchema.optional(),
    headerVideo: HeaderVideoSchema.optional(),
    headerDocument: HeaderDocumentSchema.optional(),
    body: text(LIMITS.buttons.body),
    footer: text(LIMITS.buttons.footer).optional(),
    // The maximum is checked in the refinement below (see ListMessagesSchema).
    buttons: z.array(ButtonSchema).min(LIMITS.buttons.count.min, 'at least one button is required'),
  })
  .superRefine((rb, ctx) => {
    const headers = (['headerImage', 'headerVideo', 'headerDocument'] as const).filter((k) => rb[k] !== undefined);
    if (headers.length > 1) ctx.addIssue({ code: 'custom', path: [headers[1]!], message: `only one header is allowed (also has ${headers[0]})` });
    const ids = new Map<string, number>();
    const titles = new Map<string, number>();
    const list: unknown[] = Array.isArray(rb.buttons) ? rb.buttons : [];
    if (list.length > LIMITS.buttons.count.max) {
      ctx.addIssue({ code: 'custom', path: ['buttons'], message: `at most ${LIMITS.buttons.count.max} buttons are allowed (has ${list.length})` });
    }
    list.forEach((b, i) => {
      if (!isObject(b)) return;
      const id = b['id'];
      const title = b['title'];
      if (typeof id === 'string') {
        if (ids.has(id)) ctx.addIssue({ code: 'custom', path: ['buttons', i, 'id'], message: `duplicate button id "${id}" (also buttons[${ids.get(id)}])` });
        else ids.set(id, i);
      }
      if (typeof title === 'string') {
        if (titles.has(title)) ctx.addIssue({ code: 'custom', path: ['buttons', i, 'title'], message: `duplicate button title "${title}" (also buttons[${titles.get(title)}])` });
        else titles.set(title, i);
      }
    });
  }, always);

export const FlowActionPayloadSchema = z.strictObject({
  screen: text(200),
  data: z.record(z.string(), z.unknown()).optional(),
});

export const FlowParametersSchema = z
  .strictObject({
    mode: z.enum(['draft', 'published']),
    flow_message_version: z.literal('3'),
    flow_id: text(200),
    flow_token: idText(512),
    flow_cta: text(LIMITS.flow.cta).refine((s) => !emoji.test(s), 'must not contain emoji'),
    flow_action: z.enum(['navigate', 'data_exchange']),
    flow_action_payload: FlowActionPayloadSchema.optional(),
  })
  .superRefine((p, ctx) => {
    if (p.flow_action === 'navigate' && p.flow_action_payload === undefined) {
      ctx.addIssue({ code: 'custom', path: ['flow_action_payload'], message: 'is required when flow_action is "navigate"' });
    }
    if (p.flow_action === 'data_exchange' && p.flow_action_payload !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['flow_action_payload'], message: 'must be absent when flow_action is "data_exchange"' });
    }
  }, always);

export const FlowSchema = z.strictObject({
  body: text(LIMITS.flow.body),
  action: z.strictObject({
    name: z.literal('flow'),
    parameters: FlowParametersSchema,
  }),
});

const envelope = { from: digits, to: digits };

/** The messaging endpoint's request (seed §2.1): exactly one body object, `type` matching it. */
export const InteractiveRequestSchema = z
  .strictObject({
    ...envelope,
    type: z.enum(['contacts', 'interactive']),
    listMessages: ListMessagesSchema.optional(),
    replyButtons: ReplyButtonsSchema.optional(),
    flow: FlowSchema.optional(),
  })
  .superRefine((req, ctx) => {
    const bodies = (['listMessages', 'replyButtons', 'flow'] as const).filter((k) => req[k] !== undefined);
    if (bodies.length === 0) {
      ctx.addIssue({ code: 'custom', path: [], message: 'exactly one of listMessages, replyButtons, flow is required (found none)' });
      return;
    }
    if (bodies.length > 1) {
      ctx.addIssue({ code: 'custom', path: [bodies[1]!], message: `exactly one of listMessages, replyButtons, flow is allowed (found ${bodies.join(', ')})` });
      return;
    }
    const expected = bodies[0] === 'listMessages' ? 'contacts' : 'interactive';
    // An unknown `type` already has its own issue from the enum.
    const type: unknown = req.type;
    if ((type === 'contacts' || type === 'interactive') && type !== expected) {
      ctx.addIssue({ code: 'custom', path: ['type'], message: `must be "${expected}" for ${bodies[0]} (got "${type}")` });
    }
  }, always);

/** The SMS endpoint's request (provider.md §1.3). */
export const SmsRequestSchema = z.strictObject({
  msisdns: z.array(digits).min(1, 'at least one recipient is required'),
  message: text(LIMITS.sms.message),
  tag: z.string().max(100).optional(),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, 'must be an ISO-3166 alpha-2 code in upper case')
    .optional(),
  dial: z.number().int().positive().optional(),
  mask: z.string().min(1).max(11).optional(),
});

export type Row = z.infer<typeof RowSchema>;
export type Section = z.infer<typeof SectionSchema>;
export type ListMessages = z.infer<typeof ListMessagesSchema>;
export type Button = z.infer<typeof ButtonSchema>;
export type ReplyButtons = z.infer<typeof ReplyButtonsSchema>;
export type FlowParameters = z.infer<typeof FlowParametersSchema>;
export type FlowBody = z.infer<typeof FlowSchema>;
export type InteractiveRequest = z.infer<typeof InteractiveRequestSchema>;
export type SmsRequest = z.infer<typeof SmsRequestSchema>;
