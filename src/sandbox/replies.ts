/**
 * The sandbox's answers in each endpoint's own error shape: RFC 6749 §5.2 for the token endpoint,
 * Meta's `{error: {code, message}}` for the messaging endpoint, `{code, hint, message}` for SMS.
 */
import { formatIssues, type Issue } from '../errors.js';
import { graphError } from './cloud/graph-error.js';
import { smsErrorText } from './constants.js';
import type { Reply, SandboxEndpoint } from './types.js';

/** Meta's "Invalid parameter" code, used for every request-shape problem. */
export const INVALID_PARAMETER_CODE = 100;

/** Meta's code for an invalid or expired access token. */
export const INVALID_TOKEN_CODE = 190;

/** An OAuth error (RFC 6749 §5.2). */
export function oauthError(status: number, error: string, description: string, headers: Record<string, string> = {}): Reply {
  return { status, body: { error, error_description: description }, headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...headers } };
}

/** A Meta-style error body `{error: {code, message, …}}`. */
export function metaError(status: number, code: number, message: string, extra: Record<string, unknown> = {}): Reply {
  return { status, body: { error: { code, message, ...extra } } };
}

/** A request body that breaks the schema: 400, code 100, every issue with its path. */
export function invalidRequest(issues: readonly Issue[]): Reply {
  const message = `Invalid parameter (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n${formatIssues(issues)}`;
  return metaError(400, INVALID_PARAMETER_CODE, message, { issues: issues.map((i) => ({ path: [...i.path], message: i.message })) });
}

/** An SMS endpoint answer in the provider's failure shape (HTTP 200 unless told). */
export function smsFailure(code: number, override: { hint?: string; message?: string; status?: number } = {}): Reply {
  const text = smsErrorText(code);
  return { status: override.status ?? 200, body: { code, hint: override.hint ?? text.hint, message: override.message ?? text.message } };
}

/** Why a bearer token was refused. */
export type BearerProblem = 'missing' | 'unknown' | 'expired';

const BEARER_TEXT: Record<BearerProblem, string> = {
  missing: 'The request carries no bearer token',
  unknown: 'The access token is not valid',
  expired: 'The access token has expired',
};

/** 401 for a bearer token problem, with `WWW-Authenticate` (RFC 6750 §3) and the endpoint's body. */
export function bearerRefusal(endpoint: 'messaging' | 'sms', problem: BearerProblem): Reply {
  const description = BEARER_TEXT[problem];
  const headers = { 'www-authenticate': `Bearer realm="sandbox", error="invalid_token", error_description="${description}"` };
  if (endpoint === 'sms') return { ...smsFailure(problem === 'missing' ? 1 : 3, { status: 401, hint: description }), headers };
  return { ...metaError(401, INVALID_TOKEN_CODE, description, { type: 'OAuthException' }), headers };
}

/** The body of an injected status fault when none was given, in the endpoint's error shape. */
export function defaultFaultBody(endpoint: SandboxEndpoint, status: number): unknown {
  const description = `Injected fault: HTTP ${status}`;
  if (endpoint === 'token') return { error: oauthCodeFor(status), error_description: description };
  if (endpoint === 'sms') return { code: smsCodeFor(status), hint: description, message: smsErrorText(smsCodeFor(status)).message };
  if (endpoint === 'cloud-api') return graphError(metaCodeFor(status), { details: description }).body as unknown;
  return { error: { code: metaCodeFor(status), message: description } };
}

function oauthCodeFor(status: number): string {
  if (status === 401) return 'invalid_client';
  if (status === 500) return 'server_error';
  if (status === 429 || status >= 500) return 'temporarily_unavailable';
  return 'invalid_request';
}

function smsCodeFor(status: number): number {
  if (status === 401) return 1;
  if (status === 429 || status >= 500) return 19;
  return 13;
}

function metaCodeFor(status: number): number {
  if (status === 401) return INVALID_TOKEN_CODE;
  if (status === 429) return 130429;
  if (status >= 500) return 131000;
  return INVALID_PARAMETER_CODE;
}
