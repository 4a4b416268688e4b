/**
 * Answers in the Graph API's error shape: `{error: {message, type, code, error_subcode?,
 * error_data: {messaging_product, details}, fbtrace_id}}`, with the HTTP status Meta uses per code.
 */
import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { formatPath, type Issue } from '../../errors.js';
import { REENGAGEMENT_DETAILS, REENGAGEMENT_ERROR_CODE } from '../constants.js';
import type { Reply } from '../types.js';

/** The Cloud API codes the sandbox answers, with Meta's title and HTTP status. */
export const CLOUD_ERROR_CODES: Readonly<Record<number, { readonly title: string; readonly status: number }>> = {
  100: { title: 'Invalid parameter', status: 400 },
  190: { title: 'Access token has expired or is invalid', status: 401 },
  130429: { title: 'Rate limit hit', status: 429 },
  131000: { title: 'Something went wrong', status: 500 },
  131008: { title: 'Required parameter is missing', status: 400 },
  131009: { title: 'Parameter value is not valid', status: 400 },
  131026: { title: 'Message undeliverable', status: 400 },
  [REENGAGEMENT_ERROR_CODE]: { title: 'Re-engagement message', status: 400 },
  131056: { title: '(Business Account, Consumer Account) pair rate limit hit', status: 400 },
  132000: { title: 'Number of parameters does not match the expected number of params', status: 400 },
  132001: { title: 'Template name does not exist in the translation', status: 404 },
  132012: { title: 'Parameter format does not match format in the created template', status: 400 },
};

/** Meta's title of a code, or a generic one. */
export function titleOf(code: number): string {
  return CLOUD_ERROR_CODES[code]?.title ?? `Error ${code}`;
}

/** The details Meta gives by default for a code. */
export function defaultDetails(code: number): string {
  if (code === REENGAGEMENT_ERROR_CODE) return REENGAGEMENT_DETAILS;
  if (code === 131026) return 'Message Undeliverable.';
  if (code === 130429) return 'Cloud API message throughput has been reached.';
  if (code === 131056) return 'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.';
  return titleOf(code);
}

/** What {@link graphError} takes besides the code. */
export interface GraphErrorInit {
  readonly status?: number | undefined;
  readonly details?: string | undefined;
  readonly message?: string | undefined;
  readonly subcode?: number | undefined;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  readonly fault?: string | undefined;
}

/** A Graph API error answer for `code`. */
export function graphError(code: number, init: GraphErrorInit = {}): Reply {
  const error = {
    message: init.message ?? `(#${code}) ${titleOf(code)}`,
    type: 'OAuthException',
    code,
    ...(init.subcode !== undefined && { error_subcode: init.subcode }),
    error_data: { messaging_product: 'whatsapp', details: init.details ?? defaultDetails(code) },
    fbtrace_id: randomBytes(12).toString('base64url'),
  };
  return { status: init.status ?? CLOUD_ERROR_CODES[code]?.status ?? 400, body: { error }, headers: init.headers, fault: init.fault };
}

/**
 * A body that breaks the reference, classed as Meta does: an unknown field is 100, a missing one
 * 131008, a bad value 131009. Every problem is named in `details` with its path.
 */
export function invalidBody(issues: readonly Issue[], classes: readonly IssueClass[]): Reply {
  const code = classes.includes('unknown') ? 100 : classes.includes('missing') ? 131008 : 131009;
  const details = issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('; ');
  return graphError(code, { details });
}

/** How a schema problem is classed. */
export type IssueClass = 'unknown' | 'missing' | 'value';

/** The issues of a failed parse, with their paths and classes. */
export function issuesOf(error: z.ZodError, body: unknown): { issues: Issue[]; classes: IssueClass[] } {
  const issues: Issue[] = [];
  const classes: IssueClass[] = [];
  for (const i of error.issues) {
    const path = i.path.filter((p): p is string | number => typeof p !== 'symbol');
    if (i.code === 'unrecognized_keys') {
      issues.push({ path, message: `unknown field${i.keys.length === 1 ? '' : 's'} ${i.keys.map((k) => `"${k}"`).join(', ')}` });
      classes.push('unknown');
    } else {
      const missing = (i.code === 'invalid_type' || i.code === 'invalid_value') && valueAt(body, path) === undefined;
      issues.push({ path, message: missing ? 'is required' : i.message });
      classes.push(missing ? 'missing' : 'value');
    }
  }
  return { issues, classes };
}

function valueAt(body: unknown, path: readonly (string | number)[]): unknown {
  let v = body;
  for (const p of path) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string | number, unknown>)[p];
  }
  return v;
}
