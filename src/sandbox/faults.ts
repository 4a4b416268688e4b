/**
 * Fault injection: what the sandbox should do wrong, and for how many calls. Faults queue in the
 * order they were added; each call of an endpoint consumes the first one that matches it.
 */
import { ConfigError } from '../errors.js';
import { REENGAGEMENT_DETAILS, REENGAGEMENT_ERROR_CODE, smsErrorText } from './constants.js';
import { graphError } from './cloud/graph-error.js';
import { defaultFaultBody } from './replies.js';
import type { FaultTarget, Reply, SandboxEndpoint } from './types.js';

/** A status to answer instead of handling the call. */
export interface FailInit {
  readonly status: number;
  /** The JSON body; by default one in the endpoint's own error shape. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** For how many calls (default 1). */
  readonly times?: number | undefined;
}

/** A 429 with `Retry-After`. */
export interface RateLimitInit {
  /** Seconds, sent as `Retry-After` (default 1). */
  readonly retryAfter?: number | undefined;
  readonly body?: unknown;
  readonly times?: number | undefined;
}

/** Added latency. */
export interface LatencyInit {
  readonly endpoint?: FaultTarget | undefined;
  /** For how many calls; until cleared when absent. */
  readonly times?: number | undefined;
}

/** An SMS business code answered to valid SMS requests. */
export interface SmsErrorInit {
  readonly times?: number | undefined;
  readonly hint?: string | undefined;
  readonly message?: string | undefined;
  /** HTTP status (default 200, as the provider does). */
  readonly status?: number | undefined;
}

/** How the interactive channel refuses a recipient (default: Meta's 131047, HTTP 400). */
export interface RefusalInit {
  readonly code?: number | undefined;
  readonly status?: number | undefined;
  readonly message?: string | undefined;
  readonly details?: string | undefined;
}

/**
 * A Cloud API error code answered to the next valid Cloud API messages (read receipts excepted):
 * 130429, 131056, 131026, 131000, 131047, 190 or any other.
 */
export interface CloudErrorInit {
  readonly times?: number | undefined;
  /** Seconds, sent as `Retry-After`. */
  readonly retryAfter?: number | undefined;
  /** HTTP status (default Meta's for the code: 429 for 130429, 500 for 131000, 401 for 190, else 400). */
  readonly status?: number | undefined;
  readonly message?: string | undefined;
  readonly details?: string | undefined;
  /** Only for messages to these users (default any). */
  readonly to?: string | readonly string[] | undefined;
  /**
   * `sync` (default): the send is answered with the error. `status`: the send is accepted and a
   * `failed` status carrying the error goes to the webhook, as Meta does for 131026 and 131047.
   */
  readonly delivery?: 'sync' | 'status' | undefined;
}

/** A Cloud API error fault as consumed: the answer, or (delivered as a status) the error. */
export type CloudFault =
  | { readonly kind: 'sync'; readonly reply: Reply }
  | { readonly kind: 'status'; readonly code: number; readonly message: string | undefined; readonly details: string | undefined };

interface CloudErrorFault extends Counted {
  readonly code: number;
  readonly to: ReadonlySet<string> | undefined;
  readonly fault: CloudFault;
}

interface Counted {
  remaining: number;
}
interface StatusFault extends Counted {
  readonly target: FaultTarget;
  readonly kind: 'status' | 'rate-limit';
  readonly status: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;
}
interface LatencyFault extends Counted {
  readonly target: FaultTarget;
  readonly ms: number;
}
interface SmsFault extends Counted {
  readonly reply: Reply;
}

/** The active faults, as JSON. */
export interface FaultsSnapshot {
  readonly statuses: readonly { target: FaultTarget; kind: string; status: number; remaining: number }[];
  readonly latencies: readonly { target: FaultTarget; ms: number; remaining: number | null }[];
  readonly smsErrors: readonly { code: unknown; status: number; remaining: number }[];
  readonly refused: readonly string[];
  readonly cloudErrors: readonly { code: number; delivery: 'sync' | 'status'; to: string[] | null; remaining: number }[];
}

/** The faults the sandbox will inject; see {@link Sandbox.faults}. */
export class Faults {
  #statuses: StatusFault[] = [];
  #latencies: LatencyFault[] = [];
  #smsErrors: SmsFault[] = [];
  #cloudErrors: CloudErrorFault[] = [];
  readonly #refused = new Map<string, Reply>();

  /** Answers `status` (and `body`) to the next `times` calls of `target`. */
  fail(target: FaultTarget, init: FailInit): void {
    const status = httpStatus(init.status);
    this.#statuses.push({ target, kind: 'status', status, body: init.body, headers: init.headers ?? {}, remaining: count(init.times) });
  }

  /** Answers 429 with `Retry-After` to the next `times` calls of `target`. */
  rateLimit(target: FaultTarget, init: RateLimitInit = {}): void {
    const retryAfter = init.retryAfter ?? 1;
    if (!Number.isInteger(retryAfter) || retryAfter < 0) throw new ConfigError('retryAfter', `must be whole seconds (got ${retryAfter})`);
    const headers = { 'retry-after': String(retryAfter) };
    this.#statuses.push({ target, kind: 'rate-limit', status: 429, body: init.body, headers, remaining: count(init.times) });
  }

  /** Delays calls by `ms` milliseconds. */
  latency(ms: number, init: LatencyInit = {}): void {
    if (!Number.isFinite(ms) || ms < 0) throw new ConfigError('ms', `must be a non-negative number of milliseconds (got ${ms})`);
    const remaining = init.times === undefined ? Number.POSITIVE_INFINITY : count(init.times);
    this.#latencies.push({ target: init.endpoint ?? 'any', ms, remaining });
  }

  /** Answers the SMS business `code` (`{code, hint, message}`) to the next `times` valid SMS. */
  smsError(code: number, init: SmsErrorInit = {}): void {
    if (!Number.isInteger(code) || code === 0) throw new ConfigError('code', `must be a non-zero whole number (got ${code})`);
    const text = smsErrorText(code);
    const body = { code, hint: init.hint ?? text.hint, message: init.message ?? text.message };
    this.#smsErrors.push({ reply: { status: httpStatus(init.status ?? 200), body, fault: 'sms-error' }, remaining: count(init.times) });
  }

  /** Refuses interactive messages to these numbers until cleared (SMS still goes through). */
  refuseInteractive(to: string | readonly string[], init: RefusalInit = {}): void {
    const reply = refusalReply(init);
    for (const number of typeof to === 'string' ? [to] : to) this.#refused.set(number, reply);
  }

  /** Accepts interactive messages to these numbers again. */
  allowInteractive(to: string | readonly string[]): void {
    for (const number of typeof to === 'string' ? [to] : to) this.#refused.delete(number);
  }

  /** Answers the Cloud API error `code` to the next `times` valid Cloud API messages. */
  cloudError(code: number, init: CloudErrorInit = {}): void {
    if (!Number.isInteger(code) || code <= 0) throw new ConfigError('code', `must be a positive whole number (got ${code})`);
    const retryAfter = init.retryAfter;
    if (retryAfter !== undefined && (!Number.isInteger(retryAfter) || retryAfter < 0)) throw new ConfigError('retryAfter', `must be whole seconds (got ${retryAfter})`);
    const headers = retryAfter === undefined ? undefined : { 'retry-after': String(retryAfter) };
    const status = init.status === undefined ? undefined : httpStatus(init.status);
    const fault: CloudFault =
      init.delivery === 'status'
        ? { kind: 'status', code, message: init.message, details: init.details }
        : { kind: 'sync', reply: graphError(code, { status, message: init.message, details: init.details, headers, fault: 'cloud-error' }) };
    const to = init.to === undefined ? undefined : new Set(typeof init.to === 'string' ? [init.to] : init.to);
    this.#cloudErrors.push({ code, to, fault, remaining: count(init.times) });
  }

  /** Consumes the Cloud API error fault for one valid message to `to`, if any. */
  takeCloudError(to: string): CloudFault | undefined {
    const f = this.#cloudErrors.find((x) => x.to === undefined || x.to.has(to));
    if (f === undefined) return undefined;
    if (--f.remaining <= 0) this.#cloudErrors = this.#cloudErrors.filter((x) => x !== f);
    return f.fault;
  }

  /** Removes every fault. */
  clear(): void {
    this.#cloudErrors = [];
    this.#statuses = [];
    this.#latencies = [];
    this.#smsErrors = [];
    this.#refused.clear();
  }

  /** The active faults. */
  snapshot(): FaultsSnapshot {
    return {
      statuses: this.#statuses.map((f) => ({ target: f.target, kind: f.kind, status: f.status, remaining: f.remaining })),
      latencies: this.#latencies.map((f) => ({ target: f.target, ms: f.ms, remaining: Number.isFinite(f.remaining) ? f.remaining : null })),
      smsErrors: this.#smsErrors.map((f) => ({ code: (f.reply.body as { code: unknown }).code, status: f.reply.status, remaining: f.remaining })),
      refused: [...this.#refused.keys()],
      cloudErrors: this.#cloudErrors.map((f) => ({ code: f.code, delivery: f.fault.kind, to: f.to === undefined ? null : [...f.to], remaining: f.remaining })),
    };
  }

  /** Consumes the latency for one call of `endpoint` (0 when none). */
  takeLatency(endpoint: SandboxEndpoint): number {
    const f = take(this.#latencies, endpoint);
    this.#latencies = this.#latencies.filter((l) => l.remaining > 0);
    return f?.ms ?? 0;
  }

  /** Consumes the status fault for one call of `endpoint`, if any. */
  takeStatus(endpoint: SandboxEndpoint): Reply | undefined {
    const f = take(this.#statuses, endpoint);
    this.#statuses = this.#statuses.filter((s) => s.remaining > 0);
    if (f === undefined) return undefined;
    const body = f.body === undefined ? defaultFaultBody(endpoint, f.status) : f.body;
    return { status: f.status, body, headers: f.headers, fault: f.kind };
  }

  /** Consumes the SMS error for one valid SMS, if any. */
  takeSmsError(): Reply | undefined {
    const f = this.#smsErrors[0];
    if (f === undefined) return undefined;
    if (--f.remaining <= 0) this.#smsErrors.shift();
    return f.reply;
  }

  /** The refusal for an interactive message to `to`, if it is refused. */
  refusalFor(to: string): Reply | undefined {
    return this.#refused.get(to);
  }
}

function take<T extends Counted & { readonly target: FaultTarget }>(list: T[], endpoint: SandboxEndpoint): T | undefined {
  const f = list.find((x) => x.remaining > 0 && (x.target === 'any' || x.target === endpoint));
  if (f !== undefined) f.remaining--;
  return f;
}

function refusalReply(init: RefusalInit): Reply {
  const code = init.code ?? REENGAGEMENT_ERROR_CODE;
  const message = init.message ?? (code === REENGAGEMENT_ERROR_CODE ? 'Re-engagement message' : `Error ${code}`);
  const details = init.details ?? (code === REENGAGEMENT_ERROR_CODE ? REENGAGEMENT_DETAILS : message);
  return { status: httpStatus(init.status ?? 400), body: { error: { code, message, error_data: { details } } }, fault: 'refused' };
}

function count(times: number | undefined): number {
  const n = times ?? 1;
  if (!Number.isInteger(n) || n < 1) throw new ConfigError('times', `must be a positive whole number (got ${n})`);
  return n;
}

function httpStatus(status: number): number {
  if (!Number.isInteger(status) || status < 200 || status > 599) throw new ConfigError('status', `must be an HTTP status, 200 to 599 (got ${status})`);
  return status;
}
