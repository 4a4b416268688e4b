/** The connector's signature: `X-Colloquy-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`. */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying the signature. */
export const HANDOFF_SIGNATURE_HEADER = 'X-Colloquy-Signature-256';

/** The header value for a body. */
export function signHandoffEvent(rawBody: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** True when `header` is the body's signature with `secret` (constant time). */
export function verifyHandoffSignature(rawBody: string | Buffer, header: string | undefined, secret: string): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(signHandoffEvent(rawBody, secret));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
