/**
 * Claims that end: a claim with no activity of its agent (a claim, a message, a note) for the idle
 * time goes back to the queue. The deadline lives on the handoff row and the worker's `idle` work
 * returns what passed it, in the store, without a machine turn; this file is the runtime's side:
 * the option, and what follows a return (a log line, a metric, the desk's listeners).
 */
import { ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { HandoffRecord } from '../store/types.js';

/** The default idle time of a claim: 30 minutes. */
export const DEFAULT_HANDOFF_CLAIM_IDLE_MS = 30 * 60 * 1000;

/** The longest idle time a claim may be given (30 days, like a handoff's timeout). */
const MAX_CLAIM_IDLE_MS = 30 * 24 * 3_600_000;

/** The runtime option `handoffClaimIdleMs`, checked: a whole number of milliseconds, 0 for claims that never expire. */
export function claimIdleOption(ms: number | undefined): number {
  if (ms === undefined) return DEFAULT_HANDOFF_CLAIM_IDLE_MS;
  if (!Number.isSafeInteger(ms) || ms < 0 || ms > MAX_CLAIM_IDLE_MS) {
    throw new ConfigError('handoffClaimIdleMs', `must be a whole number of milliseconds from 0 (claims never expire) to 30 days, got ${String(ms)}`);
  }
  return ms;
}

interface Deps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The desk's listeners: queues and the connector's delivery. */
  readonly changed: () => void;
}

/** What the runtime does once the store returned idle claims to the queue. */
export function claimsReturned(d: Deps): (handoffs: readonly HandoffRecord[]) => void {
  return (handoffs) => {
    for (const h of handoffs) {
      d.metrics.inc('colloquy_handoff_claims_expired_total', { bot: h.botId, reason: 'idle' });
      d.logger.info(
        { bot: h.botId, user: h.user, conversation: h.conversationId, handoff: h.id, agent: h.agent, timeoutAt: h.timeoutAt },
        'a claim went back to the queue: its agent did nothing for the claim idle time',
      );
    }
    d.changed();
  };
}
