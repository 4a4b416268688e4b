/**
 * The Flow endpoint's request signature: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw
 * body>` under the app secret of the Meta app the Flow belongs to. Several secrets are accepted so
 * one can be rotated without refusing requests signed with the other.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header WhatsApp signs Flow requests in (lower case, as node reads it). */
export const FLOW_SIGNATURE_HEADER = 'x-hub-signature-256';

const HEADER = /^sha256=([0-9a-fA-F]{64})$/;

/** The header value for `raw` signed with `secret`, as WhatsApp sends it. */
export function signFlowBody(raw: string | Uint8Array, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
}

/**
 * Whether `header` is `raw`'s signature under any of `secrets`. Each comparison is constant time,
 * and every secret is tried, so the answer's timing does not say which one matched. No secret, no
 * header or a header of the wrong shape: false.
 */
export function verifyFlowSignature(raw: string | Uint8Array, header: string | undefined, secrets: readonly string[]): boolean {
  const match = header === undefined ? null : HEADER.exec(header.trim());
  if (match === null) return false;
  const given = Buffer.from(match[1]!, 'hex');
  let ok = false;
  for (const secret of secrets) {
    if (secret === '') continue;
    const expected = createHmac('sha256', secret).update(raw).digest();
    if (timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}
