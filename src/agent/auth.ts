/**
 * Who an agents' API request is. In order: a bearer token (the service account's
 * `COLLOQUY_AGENT_TOKEN`, acting for the agent the request names; else an agent's own token, which
 * may act only as that agent), an inbox session cookie (writes carry its CSRF value), and, in the
 * sandbox without a service token, anyone on loopback naming themselves (from this machine's own
 * pages and scripts only: see loopback.ts). Else 401. Tokens and sessions are looked up on every
 * request, and again for each queue a live stream sends: a removed agent or a replaced token stops
 * at once.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { HandoffError } from '../conversation/handoff-desk.js';
import type { AgentActor, AgentStore, AgentVia } from '../store/agent-types.js';
import { fromLoopback, isWrite, openRefusal } from './loopback.js';
import { AGENT_CSRF_HEADER, secretHash, sessionCookie } from './sessions.js';

export { fromLoopback } from './loopback.js';
export {
  AGENT_CSRF_HEADER,
  AGENT_SESSION_COOKIE,
  AGENT_TOKEN_PREFIX,
  DEFAULT_AGENT_SESSION_HOURS,
  endAgentSession,
  newAgentToken,
  secretHash,
  sessionFromRequest,
  startAgentSession,
  type AgentSession,
} from './sessions.js';

/** How the agents' API is protected. */
export interface AgentAuth {
  /** Where agents and sessions are looked up. */
  readonly store: AgentStore;
  /** `COLLOQUY_AGENT_TOKEN`: the service account, acting for the agent each request names. */
  readonly serviceToken?: string | undefined;
  /** The sandbox: without a service token, requests from loopback pass, naming their agent. */
  readonly openOnLoopback?: boolean | undefined;
  /** The clock sessions expire by (default `Date.now`). */
  readonly now?: (() => number) | undefined;
}

/**
 * What a request was let in with, kept to ask again later (a stream stays open for hours): an
 * agent's token or session by its hash, or the service token or the open sandbox (which hold for
 * the process's life).
 */
export type AgentCredential = { readonly via: 'service' | 'open' } | { readonly via: 'token' | 'session'; readonly hash: string; readonly agent: string };

/** Who the credentials say the caller is: an agent (`name`), or whoever the request names (service, open). */
interface Identity {
  readonly via: AgentVia;
  readonly name?: string | undefined;
  readonly credential: AgentCredential;
}

interface Refusal {
  readonly status: 401 | 403 | 415;
  readonly code: 'unauthorized' | 'forbidden' | 'csrf' | 'unsupported';
  readonly message: string;
}

const IDENTITY = 'agentIdentity';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Compares two secrets in constant time (their digests, so lengths leak nothing either). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * The middleware: refuses (401; 403 for a session's write without its CSRF value, a header naming
 * another agent, or another site's request on the open path; 415 for an open-path write whose body
 * is not JSON) or passes with `res.locals.actor` set when the caller's name is known.
 */
export function agentAuth(o: AgentAuth): RequestHandler {
  const now = o.now ?? Date.now;
  return (req, res, next) => {
    identify(o, req, now()).then((who) => {
      if ('status' in who) return refuse(res, who);
      res.locals[IDENTITY] = who;
      const header = headerAgent(req);
      if (who.name !== undefined && header !== undefined && header !== who.name) return refuse(res, impersonation(who, header));
      const name = who.name ?? header;
      if (name !== undefined) res.locals['actor'] = { name, via: who.via } satisfies AgentActor;
      next();
    }, next);
  };
}

/** The credential `agentAuth` let this request in with. */
export function requestCredential(res: Response): AgentCredential {
  const who = res.locals[IDENTITY] as Identity | undefined;
  if (who === undefined) throw new Error("requestCredential: the agents' auth middleware did not run");
  return who.credential;
}

/**
 * Whether a credential still holds, asked as `agentAuth` asks: the token's hash still the agent's,
 * the session still live (not ended, expired, nor ended by its agent's removal or new token).
 */
export async function credentialHolds(store: AgentStore, c: AgentCredential, now: number): Promise<boolean> {
  if (!('hash' in c)) return true;
  if (c.via === 'token') return (await store.agentByTokenHash(c.hash))?.name === c.agent;
  return (await store.agentSession(c.hash, now))?.agent === c.agent;
}

/**
 * The agent a request acts as, once its body is read: the credentials' agent (a body naming another
 * is 403 `forbidden`), or, for the service account and the open sandbox, the agent named by the
 * body's `agent` or the `X-Agent` header (400 when neither names one).
 */
export function requestActor(req: Request, res: Response, fromBody: string | undefined): AgentActor {
  const who = res.locals[IDENTITY] as Identity | undefined;
  if (who === undefined) throw new Error("requestActor: the agents' auth middleware did not run");
  if (who.name !== undefined) {
    if (fromBody !== undefined && fromBody !== who.name) throw new HandoffError('forbidden', impersonation(who, fromBody).message, 'agent');
    return { name: who.name, via: who.via };
  }
  const name = fromBody ?? headerAgent(req);
  if (name === undefined) {
    const why = who.via === 'service' ? 'COLLOQUY_AGENT_TOKEN acts for the agent the request names' : 'say who you are';
    throw new HandoffError('invalid', `agent: ${why}: "agent" in the body or the X-Agent header`, 'agent');
  }
  return { name, via: who.via };
}

async function identify(o: AgentAuth, req: Request, now: number): Promise<Identity | Refusal> {
  const authorization = req.get('authorization')?.trim() ?? '';
  if (authorization !== '') {
    const m = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!m) return unauthorized('send a token as "Authorization: Bearer <token>"');
    const token = m[1]!;
    if (o.serviceToken !== undefined && sameSecret(token, o.serviceToken)) return { via: 'service', credential: { via: 'service' } };
    const hash = secretHash(token);
    const agent = await o.store.agentByTokenHash(hash);
    if (agent) return { via: 'token', name: agent.name, credential: { via: 'token', hash, agent: agent.name } };
    return unauthorized('this "Authorization: Bearer" token is no agent\'s (removed, or replaced by `colloquy agents rotate`?)');
  }
  const id = sessionCookie(req);
  const hash = id === undefined ? undefined : secretHash(id);
  const session = hash === undefined ? undefined : await o.store.agentSession(hash, now);
  if (session) {
    if (isWrite(req) && !sameSecret(req.get(AGENT_CSRF_HEADER) ?? '', session.csrf)) {
      return { status: 403, code: 'csrf', message: `a signed-in write must carry the session's ${AGENT_CSRF_HEADER} header; reload the inbox` };
    }
    return { via: 'session', name: session.agent, credential: { via: 'session', hash: hash!, agent: session.agent } };
  }
  if (o.serviceToken === undefined && o.openOnLoopback && fromLoopback(req)) return openRefusal(req) ?? { via: 'open', credential: { via: 'open' } };
  return unauthorized(
    o.openOnLoopback && o.serviceToken === undefined
      ? 'send an agent\'s token (colloquy agents add NAME) as "Authorization: Bearer <token>": the sandbox opens the agents\' API without one only to loopback'
      : 'send an agent\'s token (colloquy agents add NAME) or COLLOQUY_AGENT_TOKEN as "Authorization: Bearer <token>", or sign in at /agent',
  );
}

const unauthorized = (message: string): Refusal => ({ status: 401, code: 'unauthorized', message });

function impersonation(who: Identity, named: string): Refusal {
  const whose = who.via === 'session' ? 'this session is' : 'this token is';
  return { status: 403, code: 'forbidden', message: `${whose} agent ${JSON.stringify(who.name)}'s: it cannot act as ${JSON.stringify(named)}` };
}

function refuse(res: Response, r: Refusal): void {
  if (r.status === 401) res.set('WWW-Authenticate', 'Bearer realm="colloquy-agents"');
  res.status(r.status).json({ error: { code: r.code, message: r.message } });
}

/** The `X-Agent` header, trimmed; undefined when absent or blank. */
function headerAgent(req: Request): string | undefined {
  const v = req.get('x-agent')?.trim();
  return v === undefined || v === '' ? undefined : v;
}
