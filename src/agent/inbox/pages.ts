/**
 * The inbox's pages and sign-in, served beside the agents' API: `GET /agent` (the inbox with a live
 * session, else 401 and the sign-in form), `POST /agent/session` (an agent's token for a session
 * cookie), `POST /agent/session/end` (sign out) and the page's script and styles under
 * `/agent/assets/`. The script and styles are plain files beside this module (strict CSP: no inline
 * code), read once from the package's `src/` folder, which ships with it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { type Request, type Response, type Router } from 'express';
import type { AgentStore } from '../../store/agent-types.js';
import { AGENT_CSRF_HEADER, AGENT_SESSION_COOKIE, DEFAULT_AGENT_SESSION_HOURS, endAgentSession, sameSecret, sessionFromRequest, startAgentSession } from '../auth.js';
import { originHost } from '../loopback.js';
import { inboxHtml, signInHtml } from './html.js';

/** An inbox session as the pages need it. */
export interface InboxSession {
  /** The cookie's value (the session's id). */
  readonly id: string;
  readonly agent: string;
  readonly csrf: string;
  readonly expiresAt: number;
}

/** How the pages open, find and end sessions (the agents' store, through auth.ts). */
export interface InboxSessions {
  /** Opens a session for the agent whose token this is; undefined when no agent has it. */
  start(token: string): Promise<InboxSession | undefined>;
  /** The live session the request's cookie names. */
  of(req: Request): Promise<InboxSession | undefined>;
  end(id: string): Promise<void>;
  /** The server's clock (the cookie's lifetime counts from it). */
  now(): number;
}

/** Sessions kept in the agents' store, on the clock `now` (the one the API's authentication reads). */
export function inboxSessions(store: AgentStore, now: () => number, hours = DEFAULT_AGENT_SESSION_HOURS): InboxSessions {
  return {
    start: (token) => startAgentSession(store, token, now(), hours * 3_600_000),
    of: (req) => sessionFromRequest(req, store, now()),
    end: (id) => endAgentSession(store, id),
    now,
  };
}

/** The inbox's folder in the package's sources (the same from `src/` and from `dist/`). */
const DIR = fileURLToPath(new URL('../../../src/agent/inbox/', import.meta.url));

const ASSETS: Readonly<Record<string, string>> = {
  'inbox.js': 'text/javascript; charset=utf-8',
  'inbox-core.js': 'text/javascript; charset=utf-8',
  'inbox-view.js': 'text/javascript; charset=utf-8',
  'inbox.css': 'text/css; charset=utf-8',
};

/** Adds the page routes to `router` (before the API's authentication: they do their own). */
export function addInboxPages(router: Router, sessions: InboxSessions): void {
  const bodies = new Map(Object.keys(ASSETS).map((name) => [name, readFileSync(`${DIR}${name}`, 'utf8')]));
  const body = [express.urlencoded({ extended: false, limit: 8 * 1024 }), express.json({ limit: 8 * 1024 })];
  router.get('/agent', (req, res, next) => {
    sessions
      .of(req)
      .then((s) => {
        const base = `${req.baseUrl}/agent`;
        if (!s) return void page(res.status(401), signInHtml(base));
        page(res, inboxHtml(base, s.agent, s.csrf));
      })
      .catch(next);
  });
  router.post('/agent/session', ...body, (req, res, next) => void signIn(sessions, req, res).catch(next));
  router.post('/agent/session/end', ...body, (req, res, next) => void signOut(sessions, req, res).catch(next));
  router.get('/agent/assets/:name', (req, res) => {
    const name = String(req.params['name']);
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (type === undefined) return void res.status(404).type('text/plain').send('not found');
    res.set('Cache-Control', 'no-cache').set('X-Content-Type-Options', 'nosniff').type(type).send(bodies.get(name));
  });
}

/** `POST /agent/session`: a form (`token=`, answered 303 to the inbox) or JSON (`{ token }`, answered 200). */
async function signIn(sessions: InboxSessions, req: Request, res: Response): Promise<void> {
  const form = isForm(req);
  const base = `${req.baseUrl}/agent`;
  const refuse = (status: number, code: string, message: string) => (form ? page(res.status(status), signInHtml(base, message)) : void res.status(status).json({ error: { code, message } }));
  if (!sameOrigin(req)) return refuse(403, 'forbidden', 'Sign-in from another site is refused: open the inbox itself and sign in there.');
  const token = (req.body as { token?: unknown } | undefined)?.token;
  if (typeof token !== 'string' || token.trim() === '') return refuse(400, 'invalid', 'Type your agent token.');
  const s = await sessions.start(token.trim());
  if (!s) return refuse(401, 'unauthorized', 'That token is not an agent\u2019s (it may have been replaced or its agent removed).');
  res.cookie(AGENT_SESSION_COOKIE, s.id, {
    httpOnly: true,
    sameSite: 'strict',
    secure: overHttps(req),
    path: base,
    maxAge: Math.max(0, s.expiresAt - sessions.now()),
  });
  res.set('Cache-Control', 'no-store');
  if (form) return void res.redirect(303, base);
  res.json({ agent: s.agent, expiresAt: s.expiresAt });
}

/** `POST /agent/session/end`: with the session's CSRF value (header, or the form's `csrf` field). */
async function signOut(sessions: InboxSessions, req: Request, res: Response): Promise<void> {
  const form = isForm(req);
  const base = `${req.baseUrl}/agent`;
  const s = await sessions.of(req);
  if (s) {
    const given = req.get(AGENT_CSRF_HEADER) ?? (req.body as { csrf?: unknown } | undefined)?.csrf;
    if (typeof given !== 'string' || !sameSecret(given, s.csrf)) {
      return void res.status(403).json({ error: { code: 'csrf', message: 'sign-out needs the page\u2019s CSRF value (the X-CSRF-Token header): reload the inbox and try again' } });
    }
    await sessions.end(s.id);
  }
  res.clearCookie(AGENT_SESSION_COOKIE, { httpOnly: true, sameSite: 'strict', secure: overHttps(req), path: base });
  res.set('Cache-Control', 'no-store');
  if (form) return void res.redirect(303, base);
  res.status(204).end();
}

/**
 * False for a request another site made the browser send: an `Origin` other than this server's, or
 * `Sec-Fetch-Site` saying so. A request with neither (a script, curl) is not a browser's and passes.
 */
export function sameOrigin(req: Request): boolean {
  // A browser that sends Sec-Fetch-Site says it best (its Origin may be "null" under some referrer policies).
  const site = req.get('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = req.get('origin');
  if (origin === undefined) return true;
  // The host alone: behind a proxy that ends TLS the page is https while this request is http.
  const host = originHost(origin);
  return host !== undefined && (host === req.get('host') || host === req.get('x-forwarded-host'));
}

/**
 * Whether the browser reached us over HTTPS: directly, or through a proxy that ended TLS and says
 * so. Trusting the proxy's header here is safe: a request that lies gets a Secure cookie its own
 * plain-HTTP page cannot send back, and so only breaks its own sign-in.
 */
function overHttps(req: Request): boolean {
  return req.secure || req.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https';
}

function page(res: Response, html: string): void {
  res
    .set('Cache-Control', 'no-store')
    .set('X-Content-Type-Options', 'nosniff')
    .set('X-Frame-Options', 'DENY')
    .set('Referrer-Policy', 'same-origin')
    .set(
      'Content-Security-Policy',
      ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'"].join('; '),
    )
    .type('html')
    .send(html);
}

/** A browser's form post (answered with pages and redirects), rather than a script's JSON. */
function isForm(req: Request): boolean {
  return typeof req.is('application/x-www-form-urlencoded') === 'string';
}
