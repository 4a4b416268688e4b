/**
 * The sandbox's open agents' API (no `COLLOQUY_AGENT_TOKEN`): a request from this machine acts as
 * the agent it names. "From this machine" includes the developer's browser, and so any page it has
 * open. This module keeps those pages out:
 * - another site's request (`Sec-Fetch-Site` other than `same-origin`/`none`, or an `Origin` whose
 *   host is not the request's `Host`) is refused: a "simple" cross-site POST needs no preflight;
 * - a `Host` that is not a loopback name is refused: a page whose own name was rebound to
 *   127.0.0.1 (DNS rebinding) is same-origin with itself and would read the answers;
 * - a write's body must be `application/json`, which a browser sends cross-origin only after a
 *   preflight that this server never answers.
 */
import type { Request } from 'express';

/** Why an open-path request is refused (undefined when it may pass). */
export interface OpenRefusal {
  readonly status: 403 | 415;
  readonly code: 'forbidden' | 'unsupported';
  readonly message: string;
}

/** True for a request from this machine. */
export function fromLoopback(req: Request): boolean {
  const a = req.socket.remoteAddress ?? '';
  return a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.');
}

/** True for `localhost`, `127.x.y.z` and `[::1]`, with or without a port. */
export function loopbackHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host
    .toLowerCase()
    .replace(/:\d{1,5}$/, '')
    .replace(/\.$/, '');
  return name === 'localhost' || name === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(name);
}

const WHY = "the sandbox's agents' API without COLLOQUY_AGENT_TOKEN answers only its own pages and local scripts";

/** Why the open path refuses `req`, if it does. */
export function openRefusal(req: Request): OpenRefusal | undefined {
  const host = req.get('host');
  if (!loopbackHost(host)) {
    return { status: 403, code: 'forbidden', message: `${WHY}: call it at localhost, 127.0.0.1 or [::1] (this request named the host ${JSON.stringify(host ?? '')})` };
  }
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    return { status: 403, code: 'forbidden', message: `${WHY}: a ${site} request from another page is refused` };
  }
  // "null" is what a same-origin page under `Referrer-Policy: no-referrer` sends on its writes;
  // another site's "null" cannot get past the JSON rule below (nor name an agent in a header).
  const origin = req.get('origin');
  if (origin !== undefined && origin !== 'null' && originHost(origin) !== host!.toLowerCase()) {
    return { status: 403, code: 'forbidden', message: `${WHY}: a request from ${origin} is refused` };
  }
  // A write without a body has nothing to decode, and its agent then comes from the X-Agent
  // header, which a browser sends to another origin only after a preflight.
  if (isWrite(req) && hasBody(req) && !req.is('application/json')) {
    return { status: 415, code: 'unsupported', message: `${WHY}: send the body as application/json (this one was ${req.get('content-type') ?? 'untyped'})` };
  }
  return undefined;
}

/** A request that may change something: any method but GET and HEAD. */
export function isWrite(req: Request): boolean {
  return req.method !== 'GET' && req.method !== 'HEAD';
}

function hasBody(req: Request): boolean {
  const length = req.get('content-length');
  return req.get('transfer-encoding') !== undefined || (length !== undefined && length.trim() !== '0');
}

/** The `host` (name and port) of an `Origin` header's value; undefined for `null` or garbage. */
export function originHost(origin: string): string | undefined {
  return URL.canParse(origin) ? new URL(origin).host : undefined;
}
