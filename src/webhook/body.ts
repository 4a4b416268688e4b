/**
 * Reading a POST body the way the signature needs it: the raw bytes (express.raw, bounded), the
 * `X-Hub-Signature-256` checked over exactly those bytes, then JSON parsed by us.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response } from 'express';
import { WebhookError } from './errors.js';

/** The signature header (lower case, as Node gives headers). */
export const SIGNATURE_HEADER = 'x-hub-signature-256';

/** The default body limit: 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

/** Reads raw bodies of at most `limit` bytes. */
export function rawBodyReader(limit: number): (req: Request, res: Response) => Promise<Buffer> {
  const parse: RequestHandler = express.raw({ type: () => true, limit });
  return (req, res) =>
    new Promise((resolve, reject) => {
      void parse(req, res, (err?: unknown) => {
        if (err !== undefined && err !== null && err !== 'route' && err !== 'router') reject(bodyError(err, limit));
        else resolve(bodyOf(req));
      });
    });
}

function bodyOf(req: Request): Buffer {
  const body: unknown = req.body;
  if (Buffer.isBuffer(body)) return body;
  const raw = (req as { rawBody?: unknown }).rawBody;
  if (Buffer.isBuffer(raw)) return raw;
  if (body === undefined) return Buffer.alloc(0);
  // Another body parser ran first and kept no raw bytes: the signature cannot be checked.
  throw new WebhookError(500, 'body_already_parsed', 'The request body was parsed before the webhook router: mount it before express.json() (or keep req.rawBody)');
}

function bodyError(err: unknown, limit: number): WebhookError {
  const e = err as { type?: unknown; status?: unknown; message?: unknown };
  if (e.type === 'entity.too.large') return new WebhookError(413, 'too_large', `The body is larger than ${limit} bytes`);
  if (e.type === 'encoding.unsupported') return new WebhookError(415, 'unsupported_encoding', 'The body has a content encoding the webhook does not accept');
  const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 400;
  return new WebhookError(status, 'unreadable_body', `The body could not be read${typeof e.type === 'string' ? ` (${e.type})` : ''}`);
}

/** Throws 415 unless the request says its body is JSON (`application/json` or `…+json`). */
export function requireJson(req: Request): void {
  const header = req.headers['content-type'];
  const media = (header ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(media)) return;
  const got = media === '' ? 'none' : media;
  throw new WebhookError(415, 'unsupported_media_type', `Content-Type must be application/json (got ${got})`);
}

/** Throws 401 unless `X-Hub-Signature-256` is the HMAC-SHA256 of the raw body with `secret`. */
export function requireSignature(req: Request, raw: Buffer, secret: string): void {
  const header = req.headers[SIGNATURE_HEADER];
  if (header === undefined || header === '') throw new WebhookError(401, 'signature_missing', 'The X-Hub-Signature-256 header is missing');
  const given = Buffer.from(typeof header === 'string' ? header.trim().toLowerCase() : '');
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new WebhookError(401, 'signature_invalid', 'The X-Hub-Signature-256 header does not match the body (it must be sha256=<hex HMAC-SHA256 of the raw body>)');
  }
}

/** Parses the raw body as JSON, or throws 400. */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) throw new WebhookError(400, 'invalid_json', 'The body is empty: a JSON object is expected');
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch (err) {
    throw new WebhookError(400, 'invalid_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
}

/** Compares two secrets in constant time, whatever their lengths. */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}
