/** `X-Hub-Signature-256`: `sha256=<hex HMAC-SHA256(secret, raw body)>` (provider.md §2). */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header that carries the signature. */
export const SIGNATURE_HEADER = 'x-hub-signature-256';

/** The header value for `rawBody` signed with `secret`. */
export function signBody(secret: string, rawBody: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
}

/** Whether `header` is the signature of `rawBody` with `secret`, compared in constant time. */
export function verifySignature(secret: string, rawBody: string | Uint8Array, header: string | undefined): boolean {
  if (header === undefined) return false;
  const expected = Buffer.from(signBody(secret, rawBody));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}
