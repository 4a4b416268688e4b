/**
 * Canned replies for the agents' inbox (COLLOQUY_AGENT_REPLIES_FILE): per queue, a few ready texts
 * an agent picks and edits before sending. Read and validated at start: a file that cannot be used
 * stops the start with an error naming the variable and every bad field.
 *
 * ```json
 * { "queues": { "billing": [{ "title": "Refund", "text": "Your refund is on its way." }], "*": [ … ] } }
 * ```
 * `"*"` holds the replies every queue gets (after its own); a handoff without a queue gets only those.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError, formatPath } from '../errors.js';
import { LIMITS } from '../messages/limits.js';
import { bareTextProblem, idProblem } from '../storable.js';

/** The variable naming the file; the `variable` of its errors. */
export const REPLIES_FILE_VARIABLE = 'COLLOQUY_AGENT_REPLIES_FILE';

/** The queue name whose replies every queue gets. */
export const ALL_QUEUES = '*';

/** One canned reply. */
export interface CannedReply {
  /** What the inbox's picker shows (1–60 characters). */
  readonly title: string;
  /** The text put in the reply box (a WhatsApp text: 1–4096 characters). */
  readonly text: string;
}

/** Canned replies by queue name (`*`: every queue's). */
export type CannedReplies = ReadonlyMap<string, readonly CannedReply[]>;

const text = (max: number) =>
  z
    .string('must be a string')
    .refine((v) => v.trim() !== '', 'must not be empty')
    .refine((v) => v.length <= max, `must be at most ${max} characters`)
    .superRefine((v, ctx) => {
      const p = bareTextProblem(v);
      if (p !== undefined) ctx.addIssue({ code: 'custom', message: p });
    });

const Reply = z.strictObject({ title: text(60), text: text(LIMITS.text.body) }, 'must be an object with "title" and "text"');

const File = z.strictObject(
  {
    queues: z.record(
      z.string().superRefine((v, ctx) => {
        const p = v === '' ? 'must not be empty' : idProblem(v);
        if (p !== undefined) ctx.addIssue({ code: 'custom', message: `queue name ${p}` });
      }),
      z.array(Reply, 'must be a list of replies').max(200, 'must hold at most 200 replies'),
      'must be an object of queue names',
    ),
  },
  'must be an object with "queues"',
);

/**
 * Reads and validates the file at `path`. Throws a ConfigError naming COLLOQUY_AGENT_REPLIES_FILE,
 * the file, and every bad field (`queues.billing[0].title: must not be empty`).
 */
export function loadRepliesFile(path: string): CannedReplies {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new ConfigError(REPLIES_FILE_VARIABLE, `cannot read the canned replies file ${path} (${code === 'ENOENT' ? 'no such file' : (code ?? 'unreadable')})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new ConfigError(REPLIES_FILE_VARIABLE, `the canned replies file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  return parseReplies(json, path);
}

/** Validates the parsed content of a replies file; `file` names it in errors. */
export function parseReplies(json: unknown, file: string): CannedReplies {
  const r = File.safeParse(json);
  if (!r.success) {
    const problems = r.error.issues.map((i) => `${formatPath(i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)))}: ${i.message}`);
    throw new ConfigError(REPLIES_FILE_VARIABLE, `the canned replies file ${file} has ${problems.length === 1 ? 'a problem' : `${problems.length} problems`}: ${problems.join('; ')}`);
  }
  return new Map(Object.entries(r.data.queues));
}

/** The replies an agent working on a handoff of `queue` may pick: the queue's own, then every queue's. */
export function repliesFor(replies: CannedReplies | undefined, queue: string | undefined): CannedReply[] {
  if (replies === undefined) return [];
  const own = queue === undefined || queue === ALL_QUEUES ? [] : (replies.get(queue) ?? []);
  return [...own, ...(replies.get(ALL_QUEUES) ?? [])];
}
