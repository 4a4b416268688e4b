/**
 * The verification handshake (provider.md §2): `GET ?hub.mode=subscribe&hub.verify_token=T&hub.challenge=C`
 * is answered with `C` when `T` is the configured verify token.
 */
import type { Request } from 'express';
import { sameSecret } from './body.js';
import { WebhookError } from './errors.js';

/** The longest challenge echoed back. */
const MAX_CHALLENGE = 1024;

/**
 * The challenge to answer with, or a WebhookError: 403 for a wrong mode or token (or none
 * configured), 400 for a missing challenge.
 */
export function handshake(req: Request, verifyToken: string | undefined): string {
  // Read the query ourselves: the app's query parser may be configured to nest `hub.mode`.
  const query = new URL(req.originalUrl, 'http://localhost').searchParams;
  const mode = query.get('hub.mode');
  const token = query.get('hub.verify_token');
  if (verifyToken === undefined || verifyToken === '') throw new WebhookError(403, 'handshake_disabled', 'No verify token is configured: the handshake is refused');
  if (mode !== 'subscribe') throw new WebhookError(403, 'handshake_refused', 'hub.mode must be "subscribe"');
  if (token === null || !sameSecret(token, verifyToken)) throw new WebhookError(403, 'handshake_refused', 'hub.verify_token does not match the configured verify token');
  const challenge = query.get('hub.challenge');
  if (challenge === null || challenge === '' || challenge.length > MAX_CHALLENGE) {
    throw new WebhookError(400, 'challenge_missing', `hub.challenge must be given (at most ${MAX_CHALLENGE} characters)`);
  }
  return challenge;
}
