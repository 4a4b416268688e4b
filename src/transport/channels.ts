/**
 * What the provider's answers mean, per channel (provider.md §1.2, §1.3): accepted, a permanent
 * failure, a retryable one, or a refused token.
 */
import { idProblem } from '../storable.js';
import { asRecord, type HttpResponse } from './http.js';
import { isRetryableStatus } from './retry.js';
import type { SmsOutcome } from './types.js';

/** An answer, read. */
export type Verdict =
  | { readonly ok: true; readonly providerId: string | undefined; readonly sms?: SmsOutcome | undefined }
  | {
      readonly ok: false;
      readonly kind: 'permanent' | 'retryable';
      readonly reason: string;
      readonly providerCode?: number | string | undefined;
      readonly hint?: string | undefined;
      /** The provider refused the token: refresh it and retry once, as for a 401. */
      readonly tokenRefused?: boolean | undefined;
    };

/** Reads one channel's answers. */
export type Classifier = (res: HttpResponse) => Verdict;

/** Meta error codes (provider.md §1.2): worth retrying later, or never on this channel. */
const META_RETRYABLE = new Set([130429, 131056]);
const META_PERMANENT = new Set([131047, 131026]);

/** SMS codes that say the token was refused (1 unauthorized, 3 bad authentication). */
const SMS_TOKEN_REFUSED = new Set([1, 3]);
/** The one retryable SMS code: 19, a server error. */
const SMS_RETRYABLE = 19;

/** The messaging endpoint: any 2xx is accepted; otherwise the Meta error code, then the status, decides. */
export const classifyInteractive: Classifier = (res) => {
  const body = asRecord(res.body);
  if (res.status >= 200 && res.status < 300) return { ok: true, providerId: providerIdOf(body) };
  const error = asRecord(body?.['error']);
  const code = codeOf(error?.['code']);
  const kind = code !== undefined && META_RETRYABLE.has(code) ? 'retryable' : code !== undefined && META_PERMANENT.has(code) ? 'permanent' : statusKind(res.status);
  const details = asRecord(error?.['error_data'])?.['details'];
  const text = [str(error?.['message']), str(details)].filter(Boolean).join(': ');
  return {
    ok: false,
    kind,
    providerCode: code ?? str(error?.['code']),
    reason: `Messaging endpoint answered HTTP ${res.status}${code !== undefined ? ` (code ${code})` : ''}${text ? `: ${text}` : ''}`,
  };
};

/** The SMS endpoint: a non-zero `code` is a failure whatever the HTTP status; only 19 is retryable. */
export const classifySms: Classifier = (res) => {
  const body = asRecord(res.body);
  const raw = codeOf(body?.['code']);
  const code = raw === undefined ? undefined : Math.abs(raw);
  const success = res.status >= 200 && res.status < 300;
  if (code === 0 && success) {
    const mailingId = idOf(body?.['mailingId']);
    const sms: SmsOutcome = { code, mailingId: mailingId ?? null, result: str(body?.['result']) ?? null };
    return { ok: true, providerId: mailingId === undefined ? undefined : String(mailingId), sms };
  }
  if (code === undefined || code === 0) {
    return success ? { ok: true, providerId: providerIdOf(body) } : { ok: false, kind: statusKind(res.status), reason: `SMS endpoint answered HTTP ${res.status}` };
  }
  const hint = str(body?.['hint']);
  const message = str(body?.['message']) ?? hint;
  return {
    ok: false,
    kind: code === SMS_RETRYABLE ? 'retryable' : 'permanent',
    providerCode: code,
    hint,
    reason: `SMS endpoint answered code ${code} (HTTP ${res.status})${message ? `: ${message}` : ''}`,
    tokenRefused: SMS_TOKEN_REFUSED.has(code),
  };
};

function statusKind(status: number): 'permanent' | 'retryable' {
  return isRetryableStatus(status) ? 'retryable' : 'permanent';
}

/** The provider's id in an answer: `id`, `messageId`, `mailingId` or `messages[0].id`. */
export function providerIdOf(body: Record<string, unknown> | undefined): string | undefined {
  if (body === undefined) return undefined;
  for (const key of ['id', 'messageId', 'mailingId']) {
    const id = idOf(body[key]);
    if (id !== undefined) return String(id);
  }
  const first = Array.isArray(body['messages']) ? asRecord(body['messages'][0]) : undefined;
  const id = idOf(first?.['id']);
  return id === undefined ? undefined : String(id);
}

/** An id as the provider gave it; one no store could keep or look up (a control character, 300 KB) is none. */
function idOf(v: unknown): string | number | undefined {
  return (typeof v === 'string' && v !== '' && idProblem(v) === undefined) || (typeof v === 'number' && Number.isFinite(v)) ? v : undefined;
}

/** A numeric code, also when sent as numeric text. */
function codeOf(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
}

/** A short text from an answer, fit for a column of its own (a NUL, which PostgreSQL's TEXT refuses, shown as U+FFFD). */
function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v.slice(0, 300).replaceAll('\u0000', '\ufffd') : undefined;
}
