/** Parsing the JSON bodies of the control routes, with every issue reported. */
import type { z } from 'zod';
import { ColloquyError, type Issue } from '../errors.js';
import { toIssues } from '../messages/validate.js';

/** A control request whose body does not parse; answered 400 with its issues. */
export class ControlInputError extends ColloquyError {
  override name = 'ControlInputError';
  readonly issues: readonly Issue[];
  constructor(issues: readonly Issue[]) {
    super('sandbox_control', 'Invalid control request');
    this.issues = issues;
  }
}

/** Parses a control body, treating a missing body as `{}`. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new ControlInputError(toIssues(r.error));
  return r.data;
}
