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
 * Replaces every occurrence of the given secrets in `text`. Reasons are built partly from what the
 * provider answered, and a provider that echoes the request would otherwise leak the token.
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const s of secrets) {
    if (s !== undefined && s.length >= 4 && out.includes(s)) out = out.split(s).join(REDACTED);
  }
  return out;
}

/** {@link redact} for a parsed answer body: a copy without the secrets, or the value itself when clean. */
export function redactValue(value: unknown, secrets: readonly (string | undefined)[]): unknown {
  if (value === undefined) return value;
  if (typeof value === 'string') return redact(value, secrets);
  const json = JSON.stringify(value);
  const clean = redact(json, secrets);
  return clean === json ? value : (JSON.parse(clean) as unknown);
}
