/** Who may call the agents' API: a bearer token, or (sandbox, no token set) anyone on loopback. */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';

/** How the agents' API is protected. */
export interface AgentAuth {
  /** The bearer token (`COLLOQUY_AGENT_TOKEN`); when unset the routes answer 401, except… */
  readonly token?: string | undefined;
  /** …with this set (the sandbox): open to requests from loopback addresses. */
  readonly openOnLoopback?: boolean | undefined;
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Compares two secrets in constant time (their digests, so lengths leak nothing either). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** True for a request from this machine. */
export function fromLoopback(req: Request): boolean {
  const a = req.socket.remoteAddress ?? '';
  return a === '::1' || a.startsWith('127.') || a.startsWith('::ffff:127.');
}

/** The middleware: 401 with a reason unless the request may pass. */
export function agentAuth(o: AgentAuth): RequestHandler {
  return (req, res, next) => {
    const refuse = (message: string) =>
      void res
        .status(401)
        .set('WWW-Authenticate', 'Bearer realm="colloquy-agents"')
        .json({ error: { code: 'unauthorized', message } });
    if (o.token === undefined) {
      if (o.openOnLoopback && fromLoopback(req)) return next();
      return refuse(
        o.openOnLoopback
          ? "the agents' API is open only to loopback without COLLOQUY_AGENT_TOKEN; set it to call from elsewhere"
          : 'the agents\' API is disabled: set COLLOQUY_AGENT_TOKEN and send it as "Authorization: Bearer <token>"',
      );
    }
    const m = /^Bearer\s+(.+)$/i.exec(req.get('authorization') ?? '');
    if (!m || !sameSecret(m[1]!.trim(), o.token)) return refuse('send the agents\' token as "Authorization: Bearer <token>"');
    next();
  };
}
