/**
 * What a Cloud API answer means. A 2xx is accepted (`messages[0].id`); an error answer
 * (`{error: {message, type, code, error_subcode, error_data: {details}, fbtrace_id}}`) is read by
 * its `code` into a {@link FailureClass}, which decides whether the call is retried, the number or
 * the user paced, or the message given to the window policy or the SMS fallback.
 */
import { idProblem } from '../../storable.js';
import { asRecord, type HttpResponse } from '../http.js';
import type { FailureClass } from '../provider.js';

/** An answer, read. */
export type CloudVerdict =
  | { readonly ok: true; readonly providerId: string | undefined }
  | {
      readonly ok: false;
      readonly class: FailureClass;
      readonly kind: 'permanent' | 'retryable';
      /** Meta's `error.code`, when the answer had one. */
      readonly code: number | undefined;
      /** What Meta said: `message` and `error_data.details`, shortened; empty when it said nothing. */
      readonly said: string;
    };

/** Codes that say the access token (or what it may do) was refused: a configuration error. */
const AUTH_CODES = new Set([0, 3, 10, 190]);
/** Codes of a passing fault on Meta's side, or an app or account rate limit: retried with backoff. */
const TRANSIENT_CODES = new Set([1, 2, 4, 80007, 131000, 131016, 133004]);
const CLASS_OF = new Map<number, FailureClass>([
  [130429, 'throughput'],
  // The spam rate limit: the number may send again later.
  [131048, 'throughput'],
  [131056, 'pair-rate'],
  [131047, 'window'],
  [131026, 'undeliverable'],
]);
/** Parameter and template errors: the message as it is will never go, whatever the HTTP status. */
function isInvalidCode(code: number): boolean {
  return code === 100 || code === 131008 || code === 131009 || code === 133010 || (code >= 132000 && code <= 132069);
}
const RETRYABLE: ReadonlySet<FailureClass> = new Set(['throughput', 'pair-rate', 'transient']);

/** Reads one answer of the messages endpoint. */
export function classifyCloud(res: HttpResponse): CloudVerdict {
  const body = asRecord(res.body);
  if (res.status >= 200 && res.status < 300) return { ok: true, providerId: messageIdOf(body) };
  const error = asRecord(body?.['error']);
  const code = codeOf(error?.['code']);
  const cls = classOf(res.status, code);
  const details = asRecord(error?.['error_data'])?.['details'];
  const said = [short(error?.['message']), short(details)].filter((s) => s !== undefined && s !== '').join(': ');
  return { ok: false, class: cls, kind: RETRYABLE.has(cls) ? 'retryable' : 'permanent', code, said };
}

/**
 * The class of an error code in a `failed` status on the webhook (no HTTP status there): undefined
 * for a code Colloquy does not know, which the runtime treats as a plain permanent failure.
 */
export function statusClass(code: number | string | undefined): FailureClass | undefined {
  const n = typeof code === 'string' && /^\d+$/.test(code) ? Number(code) : code;
  if (typeof n !== 'number' || !Number.isInteger(n)) return undefined;
  const cls = classOf(400, n);
  // classOf reads an unknown code under a 400 as `invalid`: only say so for the codes known to be.
  return cls === 'invalid' && !isInvalidCode(n) ? undefined : cls;
}

function classOf(status: number, code: number | undefined): FailureClass {
  if (status === 401 || (code !== undefined && (AUTH_CODES.has(code) || (code >= 200 && code <= 299)))) return 'auth';
  if (code !== undefined) {
    const known = CLASS_OF.get(code);
    if (known !== undefined) return known;
    if (TRANSIENT_CODES.has(code)) return 'transient';
    if (isInvalidCode(code)) return 'invalid';
  }
  if (status >= 500 || status === 408 || status === 429) return 'transient';
  return 'invalid';
}

/** `messages[0].id` of an accepted answer. */
function messageIdOf(body: Record<string, unknown> | undefined): string | undefined {
  const first = Array.isArray(body?.['messages']) ? asRecord((body['messages'] as unknown[])[0]) : undefined;
  const id = first?.['id'];
  return typeof id === 'string' && id !== '' && idProblem(id) === undefined ? id : undefined;
}

/** A numeric code, also when sent as numeric text. */
function codeOf(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
}

function short(v: unknown): string | undefined {
  return typeof v === 'string' ? v.slice(0, 500).replaceAll('\u0000', '\ufffd') : undefined;
}
