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

// The one redaction of the framework lives in src/redact.ts (the sandbox uses it too).
export { redact } from '../redact.js';
