/** The webhook's refusals: an HTTP status, a stable code and a reason, answered as JSON. */
import type { Response } from 'express';
import type { z } from 'zod';
import { ColloquyError, formatPath, type Issue } from '../errors.js';

/** A request the webhook refuses (or, for a 5xx, could not take). Never carries secrets. */
export class WebhookError extends ColloquyError {
  override name = 'WebhookError';
  /** The HTTP status answered. */
  readonly status: number;
  /** For a payload that breaks the schema: every problem, with its path. */
  readonly issues: readonly Issue[] | undefined;
  constructor(status: number, code: string, message: string, issues?: readonly Issue[], options?: { cause?: unknown }) {
    super(code, message, options);
    this.status = status;
    this.issues = issues;
  }
}

/** The JSON body of a refusal. */
export interface ErrorBody {
  readonly error: { readonly code: string; readonly message: string; readonly issues?: readonly { readonly path: string; readonly message: string }[] };
}

/** The answer for a refusal: `{error: {code, message, issues?}}`. */
export function errorBody(err: WebhookError): ErrorBody {
  const issues = err.issues?.map((i) => ({ path: formatPath(i.path), message: i.message }));
  return { error: { code: err.code, message: err.message, ...(issues !== undefined && { issues }) } };
}

/** Sends a refusal. */
export function sendError(res: Response, err: WebhookError): void {
  if (err.status === 503) res.set('Retry-After', '5');
  res.status(err.status).json(errorBody(err));
}

/** A zod failure as a 400 naming every problem. */
export function schemaError(what: string, error: z.ZodError): WebhookError {
  const issues: Issue[] = error.issues.map((i) => ({ path: i.path.filter((p): p is string | number => typeof p !== 'symbol'), message: i.message }));
  const first = issues[0];
  const summary = first ? `${formatPath(first.path)}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''}` : 'invalid';
  return new WebhookError(400, 'invalid_payload', `The ${what} does not match the expected format: ${summary}`, issues);
}
