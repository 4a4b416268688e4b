/** Reading requests and writing answers: body parsing, header redaction, bearer tokens. */
import { redact } from '../redact.js';
import type { IncomingHttpHeaders } from 'node:http';
import type { Response } from 'express';
import type { IncomingRequest, Reply } from './types.js';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
const FORM_TYPE = 'application/x-www-form-urlencoded';

/** The media type of a `Content-Type` header: lower case, without parameters. */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Whether a media type is JSON (`application/json` or `application/…+json`). */
export function isJson(mediaType: string): boolean {
  return JSON_TYPE.test(mediaType);
}

/** Whether a media type is a form (`application/x-www-form-urlencoded`). */
export function isForm(mediaType: string): boolean {
  return mediaType === FORM_TYPE;
}

/** Parses a raw body by its content type, once for recording and handling. */
export function parseIncoming(headers: IncomingHttpHeaders, raw: unknown): IncomingRequest {
  const mediaType = mediaTypeOf(headers['content-type']);
  const text = Buffer.isBuffer(raw) && raw.length > 0 ? raw.toString('utf8') : undefined;
  const base = { headers, mediaType };
  if (text === undefined) return { ...base, body: undefined };
  if (isForm(mediaType)) return { ...base, body: parseForm(text) };
  if (!isJson(mediaType)) return { ...base, body: text };
  try {
    return { ...base, body: JSON.parse(text) as unknown };
  } catch (err) {
    return { ...base, body: text, jsonError: err instanceof Error ? err.message : String(err) };
  }
}

/** Form fields; a field given more than once becomes an array (RFC 6749 forbids that). */
export function parseForm(text: string): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const prev = fields[key];
    fields[key] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value];
  }
  return fields;
}

/** Headers for the record: lower-case names, one string each, credentials redacted. */
export function redactHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(', ') : value;
    out[name] = name === 'authorization' || name === 'proxy-authorization' ? redactCredentials(joined) : joined;
  }
  return out;
}

function redactCredentials(value: string): string {
  const scheme = value.trim().split(/\s+/)[0] ?? '';
  return scheme === '' ? '<redacted>' : `${scheme} <redacted>`;
}

const SECRET_FIELDS = ['client_secret', 'access_token'] as const;

/**
 * A body for the record: a token request's `client_secret` and a grant's `access_token` redacted,
 * wherever else in the body they appear too.
 */
export function redactBody(body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const fields = SECRET_FIELDS.filter((field) => field in body);
  if (fields.length === 0) return body;
  const values = fields.map((field) => (body as Record<string, unknown>)[field]).filter((v): v is string => typeof v === 'string');
  const clean = redact(body, values, '<redacted>') as Record<string, unknown>;
  return { ...clean, ...Object.fromEntries(fields.map((field) => [field, '<redacted>'])) };
}

/** The token of an `Authorization: Bearer <token>` header, if there is one. */
export function bearerToken(headers: IncomingRequest['headers']): string | undefined {
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(headerOf(headers, 'authorization') ?? '');
  return match?.[1];
}

/** One header's value (the first when repeated). */
export function headerOf(headers: IncomingRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Writes a reply as JSON. */
export function send(res: Response, reply: Reply): void {
  res.status(reply.status);
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.body === undefined) res.end();
  else res.json(reply.body);
}
