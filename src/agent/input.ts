/** The agents' API request bodies, validated with every problem named by its field. */
import { z } from 'zod';
import { HandoffError } from '../conversation/handoff-desk.js';
import { formatPath, MessageValidationError, type Issue } from '../errors.js';
import { buttons, list, sms, text, type ButtonsInit, type ListInit } from '../messages/builders.js';
import type { Message } from '../messages/message.js';
import { toIssues } from '../messages/validate.js';
import { bareTextProblem, idProblem } from '../storable.js';

/** Refuses a value a store cannot keep in a column of its own (see storable.ts): the same 400 on both stores. */
const storable = (problem: (v: string) => string | undefined) => (value: string, ctx: z.RefinementCtx) => {
  const p = problem(value);
  if (p !== undefined) ctx.addIssue({ code: 'custom', message: p });
};

const agentName = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters')
  .superRefine(storable((v) => idProblem(v, 64)));
/** A queue or bot name to filter by. */
const filterName = z
  .string()
  .min(1)
  .superRefine(storable((v) => idProblem(v)));

/** `GET /agent/handoffs?queue=&bot=&status=`. */
export const QueueQuery = z.strictObject({
  queue: filterName.optional(),
  bot: filterName.optional(),
  status: z.enum(['waiting', 'claimed'], 'must be "waiting" or "claimed"').optional(),
});

/** `GET /agent/replies?queue=`. */
export const RepliesQuery = z.strictObject({ queue: filterName.optional() });

/** `POST …/claim`. */
export const ClaimBody = z.strictObject({ agent: agentName.optional() });

/** `POST …/release`. */
export const ReleaseBody = z.strictObject({
  agent: agentName.optional(),
  note: z.string().max(2000, 'must be at most 2000 characters').superRefine(storable(bareTextProblem)).optional(),
});

/** `POST …/notes`: an internal note the user never sees. */
export const NoteBody = z.strictObject({
  agent: agentName.optional(),
  text: z.string().min(1, 'must not be empty').max(2000, 'must be at most 2000 characters').superRefine(storable(bareTextProblem)),
});

/** `POST …/messages`: `{ text }` or `{ message }` (a list or buttons in the builders' shape, or text / sms). */
export const MessageBody = z.strictObject({
  agent: agentName.optional(),
  text: z.string().optional(),
  message: z.looseObject({ kind: z.enum(['text', 'sms', 'list', 'buttons'], 'must be "text", "sms", "list" or "buttons"') }).optional(),
});

/** The shapes the list and buttons builders walk (their values are checked by the builders themselves). */
const objects = (what: string) => z.array(z.looseObject({}, `must be an object (${what})`), `must be a list of ${what}s`);
const ListShape = z.looseObject({
  sections: z.array(z.looseObject({ rows: objects('row: { id, title }') }, 'must be an object (section: { title?, rows })'), 'must be a list of sections').optional(),
  rows: objects('row: { id, title }').optional(),
});
const ButtonsShape = z.looseObject({
  buttons: objects('button: { id, title }'),
  document: z.looseObject({}, 'must be an object ({ link, fileName })').optional(),
});

/** The first issue as a 400 naming its field. */
export function invalid(issues: readonly Issue[], prefix = ''): HandoffError {
  const first = issues[0];
  const field = first ? `${prefix}${formatPath(first.path)}` : prefix || 'body';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new HandoffError('invalid', `${field}: ${first?.message ?? 'invalid'}${more}`, field);
}

/** Parses a body with a schema; a failure is a 400 naming the field. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw invalid(toIssues(r.error));
  return r.data;
}

/** The message an agent sends, built (and checked) by the same builders a bot uses. */
export function agentMessage(b: z.infer<typeof MessageBody>): Message {
  if ((b.text === undefined) === (b.message === undefined)) throw new HandoffError('invalid', 'text: give either "text" or "message"', b.text === undefined ? 'text' : 'message');
  try {
    if (b.text !== undefined) return text(b.text);
    const { kind, ...init } = b.message!;
    if (kind === 'text' || kind === 'sms') {
      const t = (init as { text?: unknown }).text;
      if (typeof t !== 'string') throw new HandoffError('invalid', 'message.text: must be a string', 'message.text');
      return kind === 'text' ? text(t) : sms(t);
    }
    const shape = (kind === 'list' ? ListShape : ButtonsShape).safeParse(init);
    if (!shape.success) throw invalid(toIssues(shape.error), 'message.');
    return kind === 'list' ? list(init as unknown as ListInit) : buttons(init as unknown as ButtonsInit);
  } catch (err) {
    if (err instanceof MessageValidationError) throw invalid(err.issues, b.text !== undefined ? '' : 'message.');
    if (err instanceof HandoffError) throw err;
    // A builder tripped over a value of a type the shapes above do not cover: say which message, not the runtime's words.
    throw new HandoffError('invalid', `message: not a valid ${b.message?.kind ?? ''} message: check the type of each field`, 'message');
  }
}
