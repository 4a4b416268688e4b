/**
 * `POST {auth_url}/token`: the OAuth 2.0 client-credentials grant (RFC 6749 §4.4), with the client
 * authenticated by form fields or HTTP Basic (§2.3.1), and errors as §5.2 says.
 */
import type { EndpointDeps } from './deps.js';
import { headerOf, isForm } from './http.js';
import { oauthError } from './replies.js';
import type { IncomingRequest, Reply } from './types.js';

/** Client credentials and how they came. */
interface Credentials {
  readonly id: string;
  readonly secret: string;
  readonly via: 'basic' | 'body';
}

/** Handles a token request. */
export function handleToken(request: IncomingRequest, deps: EndpointDeps): Reply {
  if (!isForm(request.mediaType)) return oauthError(400, 'invalid_request', 'The request body must be application/x-www-form-urlencoded');
  const fields = (request.body ?? {}) as Record<string, string | string[]>;
  const repeated = Object.keys(fields).filter((k) => Array.isArray(fields[k]));
  if (repeated.length > 0) return oauthError(400, 'invalid_request', `Parameters sent more than once: ${repeated.join(', ')}`);
  const grantType = fields['grant_type'];
  if (grantType === undefined || grantType === '') return oauthError(400, 'invalid_request', 'The grant_type parameter is missing');
  if (grantType !== 'client_credentials') return oauthError(400, 'unsupported_grant_type', `The grant type "${String(grantType)}" is not supported; use client_credentials`);
  const creds = credentialsOf(request, fields);
  if ('reply' in creds) return creds.reply;
  if (creds.id !== deps.clientId || creds.secret !== deps.clientSecret) return badClient(creds.via, 'Client authentication failed: unknown client or wrong secret');
  return { status: 200, body: deps.tokens.issue(), headers: { 'cache-control': 'no-store', pragma: 'no-cache' } };
}

function credentialsOf(request: IncomingRequest, fields: Record<string, string | string[]>): Credentials | { reply: Reply } {
  const header = headerOf(request.headers, 'authorization');
  const bodyId = fields['client_id'] as string | undefined;
  const bodySecret = fields['client_secret'] as string | undefined;
  if (header !== undefined && /^basic\s/i.test(header)) {
    if (bodySecret !== undefined) return { reply: oauthError(400, 'invalid_request', 'Use one client authentication method: HTTP Basic or the request body, not both') };
    const basic = parseBasic(header);
    if (basic === undefined) return { reply: badClient('basic', 'The Basic authorization header is malformed') };
    if (bodyId !== undefined && bodyId !== basic.id) return { reply: oauthError(400, 'invalid_request', 'client_id in the body differs from the one in the Basic header') };
    return basic;
  }
  if (bodyId === undefined || bodyId === '') return { reply: badClient('body', 'Client authentication is missing: send client_id and client_secret') };
  return { id: bodyId, secret: bodySecret ?? '', via: 'body' };
}

/** Decodes `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1). */
export function parseBasic(header: string): Credentials | undefined {
  const match = /^basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(header);
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)), via: 'basic' };
  } catch {
    return undefined;
  }
}

function formDecode(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

/** 401 invalid_client; with Basic, the `WWW-Authenticate` challenge RFC 6749 §5.2 requires. */
function badClient(via: Credentials['via'], description: string): Reply {
  return oauthError(401, 'invalid_client', description, via === 'basic' ? { 'www-authenticate': 'Basic realm="sandbox"' } : {});
}
