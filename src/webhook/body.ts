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
  return (req, res) => {
    const length = plainLength(req, limit);
    if (length !== undefined) return readPlain(req, length, limit);
    return new Promise((resolve, reject) => {
      void parse(req, res, (err?: unknown) => {
        if (err !== undefined && err !== null && err !== 'route' && err !== 'router') reject(bodyError(err, limit));
        else resolve(bodyOf(req));
      });
    });
  };
}

/**
 * The declared length of a body that can be read as it comes: not encoded, not chunked, within the
 * limit, not read yet. Other bodies (gzip, chunked, too large, already parsed) go through
 * express.raw, which decodes, bounds and refuses them; it cost a webhook about 12 µs of checks.
 */
function plainLength(req: Request, limit: number): number | undefined {
  const h = req.headers;
  if (h['content-encoding'] !== undefined || h['transfer-encoding'] !== undefined) return undefined;
  const declared = h['content-length'];
  if (declared === undefined || !/^[0-9]{1,15}$/.test(declared)) return undefined;
  const length = Number(declared);
  if (length === 0 || length > limit || req.complete || req.readableEnded || (req as { body?: unknown }).body !== undefined) return undefined;
  return length;
}

/** Reads a plain body of `length` bytes, failing as express.raw would (an aborted or cut request is a 400). */
function readPlain(req: Request, length: number, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      if (received !== length) reject(bodyError({ type: 'request.size.invalid', status: 400 }, limit));
      else {
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received);
        (req as { body?: unknown }).body = body; // where express.raw leaves it
        resolve(body);
      }
    };
    const onAborted = () => {
      cleanup();
      reject(bodyError({ type: 'request.aborted', status: 400 }, limit));
    };
    const onError = (err: unknown) => {
      cleanup();
      reject(bodyError(err, limit));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('aborted', onAborted);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('aborted', onAborted);
    req.on('error', onError);
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
  matchingSecrets(req, raw, [secret]);
}

/**
 * The secrets (of `secrets`) whose HMAC-SHA256 of the raw body is the `X-Hub-Signature-256`
 * header; every one is compared, each in constant time. Throws 401 when the header is missing or
 * none matches.
 */
export function matchingSecrets(req: Request, raw: Buffer, secrets: readonly string[]): string[] {
  const header = req.headers[SIGNATURE_HEADER];
  if (header === undefined || header === '') throw new WebhookError(401, 'signature_missing', 'The X-Hub-Signature-256 header is missing');
  const given = Buffer.from(typeof header === 'string' ? header.trim().toLowerCase() : '');
  const matched = secrets.filter((secret) => {
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (matched.length === 0) {
    throw new WebhookError(401, 'signature_invalid', 'The X-Hub-Signature-256 header does not match the body (it must be sha256=<hex HMAC-SHA256 of the raw body>)');
  }
  return matched;
}

/**
 * How deeply a webhook body may nest objects and arrays. Real payloads nest about ten levels; a
 * body nested thousands deep can never be stored (serializing it overflows the stack), so it is
 * refused with a 400 rather than failing with a 500 on every redelivery.
 */
export const MAX_JSON_DEPTH = 64;

/** Parses the raw body as JSON, or throws 400 (not JSON, or nested deeper than {@link MAX_JSON_DEPTH}). */
export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) throw new WebhookError(400, 'invalid_json', 'The body is empty: a JSON object is expected');
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8')) as unknown;
  } catch (err) {
    throw new WebhookError(400, 'invalid_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
  // Fewer brackets than the limit cannot nest past it (the usual body): skip the byte-by-byte walk.
  const depth = fewerOpeningsThan(raw, MAX_JSON_DEPTH + 1) ? 0 : jsonDepth(raw, MAX_JSON_DEPTH);
  if (depth > MAX_JSON_DEPTH) throw new WebhookError(400, 'too_deep', `The body is nested more than ${MAX_JSON_DEPTH} levels deep (objects and arrays within each other); no webhook payload is`);
  return json;
}

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether `raw` holds fewer than `n` opening brackets (`{` and `[`, strings included), found natively. */
function fewerOpeningsThan(raw: Buffer, n: number): boolean {
  let count = 0;
  for (const open of [OPEN_OBJECT, OPEN_ARRAY]) {
    for (let i = raw.indexOf(open); i !== -1; i = raw.indexOf(open, i + 1)) if (++count >= n) return false;
  }
  return true;
}

/** The deepest nesting of valid JSON bytes, counted without recursion; stops once past `limit`. */
export function jsonDepth(raw: Uint8Array, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) depth--;
  }
  return deepest;
}

/** Compares two secrets in constant time, whatever their lengths. */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}
