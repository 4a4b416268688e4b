/**
 * Zod schemas of the Cloud API's message bodies (`POST /{phone_number_id}/messages`), with Meta's
 * field names and limits: text, template, and the interactive list, reply buttons and flow. What
 * `request()` builds is checked against these before it is stored, so a message the Cloud API
 * would refuse fails when it is emitted, naming the field, not later as a 131009.
 */
import { z } from 'zod';
import { charLength } from '../../messages/limits.js';
import { TemplateSchema } from '../../messages/template.js';
import { idProblem } from '../../storable.js';

/** Meta's limits where a Cloud API body has one (counted in characters, as WhatsApp counts). */
export const CLOUD_LIMITS = {
  text: 4096,
  headerText: 60,
  footer: 60,
  list: { body: 4096, button: 20, sections: 10, rows: 10, sectionTitle: 24, rowId: 200, rowTitle: 24, rowDescription: 72 },
  buttons: { body: 1024, count: 3, id: 256, title: 20, filename: 240 },
  flow: { body: 1024, cta: 20, token: 512 },
} as const;

function text(max: number) {
  return z.string().superRefine((s, ctx) => {
    const n = charLength(s);
    if (s.trim() === '') ctx.addIssue({ code: 'custom', message: 'must not be empty' });
    if (n > max) ctx.addIssue({ code: 'custom', message: `must be at most ${max} characters (has ${n})` });
  });
}

/** An id that comes back in the user's tap (or a flow token): {@link text}, and storable when it returns. */
function idText(max: number) {
  return text(max).superRefine((s, ctx) => {
    const problem = idProblem(s, Number.POSITIVE_INFINITY);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  });
}

const link = z.string().superRefine((s, ctx) => {
  let url: URL | undefined;
  try {
    url = new URL(s);
  } catch {
    // reported below
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) ctx.addIssue({ code: 'custom', message: 'must be an absolute http(s) URL' });
});
const mediaId = text(128);
const media = z.union([z.strictObject({ link }), z.strictObject({ id: mediaId })]);
const documentMedia = z.union([
  z.strictObject({ link, filename: text(CLOUD_LIMITS.buttons.filename).optional() }),
  z.strictObject({ id: mediaId, filename: text(CLOUD_LIMITS.buttons.filename).optional() }),
]);

/** Pictographs and what builds emoji (flags, keycaps, the presentation selector): a flow's CTA may hold none. */
const emoji = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3|\uFE0F/u;

const textHeader = z.strictObject({ type: z.literal('text'), text: text(CLOUD_LIMITS.headerText) });
const footer = z.strictObject({ text: text(CLOUD_LIMITS.footer) });

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Cross-field checks also run on a partly invalid value, so every problem is listed at once. */
const always = { when: (payload: { value: unknown }) => isObject(payload.value) };

/** Reports a duplicate of `key` among `items` at `path(i)`. */
function unique(items: readonly unknown[], key: string, what: string, path: (i: number) => (string | number)[], ctx: z.RefinementCtx): void {
  const seen = new Map<unknown, number>();
  items.forEach((item, i) => {
    const value = isObject(item) ? item[key] : undefined;
    if (typeof value !== 'string') return;
    if (seen.has(value)) ctx.addIssue({ code: 'custom', path: path(i), message: `duplicate ${what} "${value}"` });
    else seen.set(value, i);
  });
}

const Row = z.strictObject({
  id: idText(CLOUD_LIMITS.list.rowId),
  title: text(CLOUD_LIMITS.list.rowTitle),
  description: text(CLOUD_LIMITS.list.rowDescription).optional(),
});
const Section = z.strictObject({ title: text(CLOUD_LIMITS.list.sectionTitle).optional(), rows: z.array(Row).min(1, 'a section needs at least one row') });

/** `interactive` of `type: list`. */
export const CloudListSchema = z
  .strictObject({
    type: z.literal('list'),
    header: textHeader.optional(),
    body: z.strictObject({ text: text(CLOUD_LIMITS.list.body) }),
    footer: footer.optional(),
    action: z.strictObject({ button: text(CLOUD_LIMITS.list.button), sections: z.array(Section).min(1, 'a list needs at least one section') }),
  })
  .superRefine((list, ctx) => {
    const sections: unknown[] = isObject(list.action) && Array.isArray(list.action['sections']) ? list.action['sections'] : [];
    const rowsOf = (s: unknown): unknown[] => (isObject(s) && Array.isArray(s['rows']) ? s['rows'] : []);
    const at = ['action', 'sections'];
    if (sections.length > CLOUD_LIMITS.list.sections) ctx.addIssue({ code: 'custom', path: at, message: `a list has at most ${CLOUD_LIMITS.list.sections} sections (has ${sections.length})` });
    const total = sections.reduce<number>((n, s) => n + rowsOf(s).length, 0);
    if (total > CLOUD_LIMITS.list.rows) ctx.addIssue({ code: 'custom', path: at, message: `a list has at most ${CLOUD_LIMITS.list.rows} rows in all sections (has ${total})` });
    if (sections.length > 1) {
      sections.forEach((s, i) => {
        if (isObject(s) && s['title'] === undefined) ctx.addIssue({ code: 'custom', path: [...at, i, 'title'], message: 'is required when a list has more than one section' });
      });
    }
    const rows = sections.flatMap((s, i) => rowsOf(s).map((row, j) => ({ row, path: [...at, i, 'rows', j, 'id'] })));
    unique(
      rows.map((r) => r.row),
      'id',
      'row id',
      (k) => rows[k]!.path,
      ctx,
    );
  }, always);

const ButtonHeader = z.discriminatedUnion('type', [
  textHeader,
  z.strictObject({ type: z.literal('image'), image: media }),
  z.strictObject({ type: z.literal('video'), video: media }),
  z.strictObject({ type: z.literal('document'), document: documentMedia }),
]);
const ReplyButton = z.strictObject({ type: z.literal('reply'), reply: z.strictObject({ id: idText(CLOUD_LIMITS.buttons.id), title: text(CLOUD_LIMITS.buttons.title) }) });

/** `interactive` of `type: button` (reply buttons). */
export const CloudButtonsSchema = z
  .strictObject({
    type: z.literal('button'),
    header: ButtonHeader.optional(),
    body: z.strictObject({ text: text(CLOUD_LIMITS.buttons.body) }),
    footer: footer.optional(),
    action: z.strictObject({ buttons: z.array(ReplyButton).min(1, 'at least one button is required') }),
  })
  .superRefine((b, ctx) => {
    const buttons: unknown[] = isObject(b.action) && Array.isArray(b.action['buttons']) ? b.action['buttons'] : [];
    const at = ['action', 'buttons'];
    if (buttons.length > CLOUD_LIMITS.buttons.count) ctx.addIssue({ code: 'custom', path: at, message: `at most ${CLOUD_LIMITS.buttons.count} buttons are allowed (has ${buttons.length})` });
    const replies = buttons.map((x) => (isObject(x) ? x['reply'] : undefined));
    unique(replies, 'id', 'button id', (i) => [...at, i, 'reply', 'id'], ctx);
    unique(replies, 'title', 'button title', (i) => [...at, i, 'reply', 'title'], ctx);
  }, always);

const FlowParameters = z
  .strictObject({
    flow_message_version: z.literal('3'),
    flow_token: idText(CLOUD_LIMITS.flow.token),
    flow_id: text(200).optional(),
    flow_name: text(200).optional(),
    flow_cta: text(CLOUD_LIMITS.flow.cta).refine((s) => !emoji.test(s), 'must not contain emoji'),
    flow_action: z.enum(['navigate', 'data_exchange']),
    flow_action_payload: z.strictObject({ screen: text(200), data: z.record(z.string(), z.unknown()).optional() }).optional(),
    mode: z.enum(['draft', 'published']).optional(),
  })
  .superRefine((p, ctx) => {
    if ((p.flow_id === undefined) === (p.flow_name === undefined)) ctx.addIssue({ code: 'custom', path: ['flow_id'], message: 'exactly one of flow_id and flow_name is required' });
    if (p.flow_action === 'navigate' && p.flow_action_payload === undefined) ctx.addIssue({ code: 'custom', path: ['flow_action_payload'], message: 'is required when flow_action is "navigate"' });
    if (p.flow_action === 'data_exchange' && p.flow_action_payload !== undefined)
      ctx.addIssue({ code: 'custom', path: ['flow_action_payload'], message: 'must be absent when flow_action is "data_exchange"' });
    const data = isObject(p.flow_action_payload) ? p.flow_action_payload['data'] : undefined;
    if (isObject(data) && Object.keys(data).length === 0) ctx.addIssue({ code: 'custom', path: ['flow_action_payload', 'data'], message: 'must be left out rather than empty' });
  }, always);

/** `interactive` of `type: flow`. */
export const CloudFlowSchema = z.strictObject({
  type: z.literal('flow'),
  header: textHeader.optional(),
  body: z.strictObject({ text: text(CLOUD_LIMITS.flow.body) }),
  footer: footer.optional(),
  action: z.strictObject({ name: z.literal('flow'), parameters: FlowParameters }),
});

const envelope = {
  messaging_product: z.literal('whatsapp'),
  recipient_type: z.literal('individual'),
  to: z.string().regex(/^[0-9]{6,20}$/, 'must be digits only (country code and number, no "+"), 6 to 20 of them'),
};

/** A whole Cloud API message body, as `POST /{phone_number_id}/messages` takes it. */
export const CloudMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ ...envelope, type: z.literal('text'), text: z.strictObject({ body: text(CLOUD_LIMITS.text), preview_url: z.boolean().optional() }) }),
  z.strictObject({ ...envelope, type: z.literal('template'), template: TemplateSchema }),
  z.strictObject({ ...envelope, type: z.literal('interactive'), interactive: z.discriminatedUnion('type', [CloudListSchema, CloudButtonsSchema, CloudFlowSchema]) }),
]);

/** A Cloud API message body. */
export type CloudMessage = z.infer<typeof CloudMessageSchema>;
/** The `interactive` object of a Cloud API message. */
export type CloudInteractive = Extract<CloudMessage, { type: 'interactive' }>['interactive'];
