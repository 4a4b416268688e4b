/**
 * Where the transport reports what it does: metrics events and a pino-compatible logger. Neither
 * may break a send, and nothing reported may hold a secret.
 */
import type { Logger } from '../log.js';
import type { TransportEvent } from './types.js';

export type { Logger };

/** The optional listeners of a transport component. */
export interface ObserverOptions {
  /** Called for every token request, retry and send, for metrics. */
  readonly onEvent?: ((e: TransportEvent) => void) | undefined;
  /** Receives debug lines for retries and warnings for failures. Never given a token or secret. */
  readonly logger?: Logger | undefined;
}

/** Emits an event; a throwing listener is logged, never propagated into a send. */
export function emit(o: ObserverOptions, event: TransportEvent): void {
  if (o.onEvent === undefined) return;
  try {
    o.onEvent(event);
  } catch (err) {
    o.logger?.error({ err: err instanceof Error ? err.message : String(err), event: event.type }, 'transport onEvent listener threw');
  }
}

const REDACTED = '[redacted]';

/**
 * The one redaction of the framework: a copy of `value` (a string, or any JSON-like value: a
 * provider's answer, a send result, an error body) with every occurrence of the given secrets
 * replaced by `[redacted]`, in strings at any depth and in object keys. The value itself comes
 * back when it holds none. A provider that echoes the request (its `Authorization` header, a token,
 * the client secret) in any field of its answer would otherwise put them in the database and logs.
 * Secrets shorter than 4 characters are ignored (they would blank out ordinary text).
 */
export function redact<T>(value: T, secrets: readonly (string | undefined)[]): T {
  const live = secrets.filter((s): s is string => s !== undefined && s.length >= 4);
  return live.length === 0 ? value : (scrub(value, live, 0) as T);
}

function scrub(value: unknown, secrets: readonly string[], depth: number): unknown {
  if (typeof value === 'string') return scrubText(value, secrets);
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 64) {
    // A freak answer nested this deep is scrubbed as text rather than walked any further.
    const json = JSON.stringify(value);
    const clean = scrubText(json, secrets);
    return clean === json ? value : (JSON.parse(clean) as unknown);
  }
  if (Array.isArray(value)) {
    const out = value.map((v) => scrub(v, secrets, depth + 1));
    return out.some((v, i) => v !== value[i]) ? out : value;
  }
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const key = scrubText(k, secrets);
    const clean = scrub(v, secrets, depth + 1);
    if (key !== k || clean !== v) changed = true;
    out[key] = clean;
  }
  return changed ? out : value;
}

function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}
