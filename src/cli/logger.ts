/** The command line's logger: pino, JSON lines on stderr, secrets and tokens redacted. */
import pino from 'pino';
import type { Logger } from '../log.js';

/** Paths pino blanks out wherever they appear in a log line. */
export const REDACT = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'client_secret',
  '*.client_secret',
  'clientSecret',
  '*.clientSecret',
  'secret',
  '*.secret',
  'signature',
  '*.signature',
];

/** A pino logger writing to stderr, so stdout stays for the command's own output. */
export function createLogger(level: string): Logger & { level: string } {
  return pino({ level, base: { app: 'colloquy' }, redact: { paths: REDACT, censor: '[redacted]' } }, pino.destination(2));
}
