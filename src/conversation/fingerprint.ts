/**
 * The fingerprint kept with an agent's `Idempotency-Key`: a SHA-256 of the canonical request (its
 * body with keys sorted, the agent, the conversation). Two requests with the same key are the same
 * request only when their fingerprints match, as payment APIs define idempotency keys.
 */
import { createHash } from 'node:crypto';

/** The fingerprint of one agent request. */
export function requestFingerprint(conversationId: number, agent: string, body: unknown): string {
  return createHash('sha256').update(canonicalJson({ conversationId, agent, body })).digest('hex');
}

/** JSON with object keys sorted at every depth, so the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value)) ?? 'null';
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) out[key] = sorted((value as Record<string, unknown>)[key]);
  return out;
}
