/** Validation that lists every problem with its path, never just the first. */
import type { z } from 'zod';
import { MessageValidationError, type Issue, type MessageOrigin } from '../errors.js';

/**
 * Zod's issues as Colloquy issues (path + message). An unknown field gets an issue of its own whose
 * path ends at that field (`listMessages.rows`), not at the object holding it.
 */
export function toIssues(error: z.ZodError, prefix: readonly (string | number)[] = []): Issue[] {
  return error.issues.flatMap((i) => {
    const path = [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (i.code === 'unrecognized_keys') return i.keys.map((key) => ({ path: [...path, key], message: `unknown field "${key}"` }));
    return [{ path, message: i.message }];
  });
}

/** A validation outcome: the parsed value, or every issue. */
export type Validation<T> = { ok: true; value: T } | { ok: false; issues: Issue[] };

/** Validates `value` without throwing. */
export function check<T>(schema: z.ZodType<T>, value: unknown, prefix: readonly (string | number)[] = []): Validation<T> {
  const r = schema.safeParse(value);
  return r.success ? { ok: true, value: r.data } : { ok: false, issues: toIssues(r.error, prefix) };
}

/** Validates `value`, throwing a {@link MessageValidationError} that lists every issue. */
export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, origin?: MessageOrigin, prefix: readonly (string | number)[] = []): T {
  const r = check(schema, value, prefix);
  if (!r.ok) throw new MessageValidationError(r.issues, origin);
  return r.value;
}
