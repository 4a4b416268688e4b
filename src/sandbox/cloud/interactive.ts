/** `type: "interactive"`: lists, reply buttons and flows, with the Cloud API's limits. */
import { z } from 'zod';
import { documentMedia, duplicates, envelope, footer, media, plainText, text } from './fields.js';

const listHeader = z.strictObject({ type: z.literal('text'), text: text(60) });

const row = z.strictObject({ id: text(200), title: text(24), description: text(72).optional() });
const section = z.strictObject({ title: text(24).optional(), rows: z.array(row).min(1, 'a section needs at least one row').max(10, 'a list has at most 10 rows in all') });

/** A list: at most 10 rows in all, unique row ids, a title on every section when there are several. */
const list = z
  .strictObject({
    type: z.literal('list'),
    header: listHeader.optional(),
    body: z.strictObject({ text: text(4096) }),
    footer: footer.optional(),
    action: z.strictObject({ button: text(20), sections: z.array(section).min(1, 'a list needs at least one section').max(10) }),
  })
  .superRefine((l, ctx) => {
    const sections = l.action.sections;
    const rows = sections.flatMap((s, si) => s.rows.map((r, ri) => ({ id: r.id, path: ['action', 'sections', si, 'rows', ri, 'id'] })));
    if (rows.length > 10) ctx.addIssue({ code: 'custom', path: ['action', 'sections'], message: `a list has at most 10 rows in all (has ${rows.length})` });
    duplicates(
      rows.map((r) => r.id),
      (i) => rows[i]!.path,
      'row id',
      ctx,
    );
    if (sections.length > 1) {
      sections.forEach((s, i) => {
        if (s.title === undefined) ctx.addIssue({ code: 'custom', path: ['action', 'sections', i, 'title'], message: 'is required when a list has more than one section' });
      });
    }
  });

/** The header of reply buttons and flows: text, or an image, video or document. */
const mediaHeader = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: text(60) }),
  z.strictObject({ type: z.literal('image'), image: media }),
  z.strictObject({ type: z.literal('video'), video: media }),
  z.strictObject({ type: z.literal('document'), document: documentMedia }),
]);

const replyButton = z.strictObject({ type: z.literal('reply'), reply: z.strictObject({ id: text(256), title: text(20) }) });

/** Reply buttons: one to three, unique ids and titles. */
const buttons = z
  .strictObject({
    type: z.literal('button'),
    header: mediaHeader.optional(),
    body: z.strictObject({ text: text(1024) }),
    footer: footer.optional(),
    action: z.strictObject({ buttons: z.array(replyButton).min(1, 'needs at least one button').max(3, 'has at most 3 buttons') }),
  })
  .superRefine((b, ctx) => {
    const list = b.action.buttons;
    duplicates(
      list.map((x) => x.reply.id),
      (i) => ['action', 'buttons', i, 'reply', 'id'],
      'button id',
      ctx,
    );
    duplicates(
      list.map((x) => x.reply.title),
      (i) => ['action', 'buttons', i, 'reply', 'title'],
      'button title',
      ctx,
    );
  });

const flowParameters = z
  .strictObject({
    flow_message_version: z.literal('3'),
    flow_token: text(1024),
    flow_id: text(64).optional(),
    flow_name: text(200).optional(),
    flow_cta: plainText(20),
    mode: z.enum(['draft', 'published']).optional(),
    flow_action: z.enum(['navigate', 'data_exchange']).optional(),
    flow_action_payload: z
      .strictObject({
        screen: text(200),
        data: z
          .record(z.string(), z.unknown())
          .refine((d) => Object.keys(d).length > 0, 'must be a non-empty object when given')
          .optional(),
      })
      .optional(),
  })
  .superRefine((p, ctx) => {
    if ((p.flow_id === undefined) === (p.flow_name === undefined)) ctx.addIssue({ code: 'custom', path: ['flow_id'], message: 'give exactly one of flow_id and flow_name' });
    const action = p.flow_action ?? 'navigate';
    if (action === 'navigate' && p.flow_action_payload === undefined) {
      ctx.addIssue({ code: 'custom', path: ['flow_action_payload'], message: 'is required when flow_action is "navigate" (its screen is the first screen)' });
    }
    if (action === 'data_exchange' && p.flow_action_payload !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['flow_action_payload'], message: 'must be omitted when flow_action is "data_exchange" (the endpoint picks the screen)' });
    }
  });

/** A flow message. */
const flow = z.strictObject({
  type: z.literal('flow'),
  header: mediaHeader.optional(),
  body: z.strictObject({ text: text(1024) }),
  footer: footer.optional(),
  action: z.strictObject({ name: z.literal('flow'), parameters: flowParameters }),
});

/** The interactive kinds the sandbox models, by `interactive.type`. */
export const INTERACTIVE_SCHEMAS = { list, button: buttons, flow } as const;

/** An interactive message body, for one kind of `interactive`. */
export function interactiveMessage(kind: keyof typeof INTERACTIVE_SCHEMAS) {
  return z.strictObject({ ...envelope, type: z.literal('interactive'), interactive: INTERACTIVE_SCHEMAS[kind] });
}
