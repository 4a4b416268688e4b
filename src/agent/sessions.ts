/**
 * Agents' tokens and inbox sessions. A token is `cq_agent_` and 32 random bytes (base64url), shown
 * once; the store keeps its SHA-256. Signing in with it opens a session: the cookie carries 32
 * random bytes (the store keeps their SHA-256) and every write of the session must send back its
 * CSRF value (24 random bytes) in a header.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Request } from 'express';
import type { AgentStore } from '../store/agent-types.js';

/** The inbox session's cookie. */
export const AGENT_SESSION_COOKIE = 'colloquy_agent';
/** The header every write of a session carries its CSRF value in (lower case, as Node reads headers). */
export const AGENT_CSRF_HEADER = 'x-csrf-token';
/** How long a session lasts unless `COLLOQUY_AGENT_SESSION_HOURS` says otherwise. */
export const DEFAULT_AGENT_SESSION_HOURS = 12;
/** How every agent's token starts (to tell it apart in a config file or a leak scanner). */
export const AGENT_TOKEN_PREFIX = 'cq_agent_';

/** The hex SHA-256 the store keeps of a token or a session id. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** A new agent's token. */
export function newAgentToken(): string {
  return `${AGENT_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** An open inbox session, as its cookie and page need it. */
export interface AgentSession {
  /** The cookie's value (never stored: the store has its hash). */
  readonly id: string;
  /** What every write must send in {@link AGENT_CSRF_HEADER}. */
  readonly csrf: string;
  readonly agent: string;
  readonly expiresAt: number;
}

/**
 * Signs in with an agent's token: a new session of `lifetimeMs` (default 12 hours) from `now`;
 * undefined when the token is nobody's.
 */
export async function startAgentSession(store: AgentStore, token: string, now: number, lifetimeMs = DEFAULT_AGENT_SESSION_HOURS * 3_600_000): Promise<AgentSession | undefined> {
  const tokenHash = secretHash(token);
  const agent = await store.agentByTokenHash(tokenHash);
  if (!agent) return undefined;
  const id = randomBytes(32).toString('base64url');
  const csrf = randomBytes(24).toString('base64url');
  const expiresAt = now + lifetimeMs;
  // False when the agent was removed or given a new token in between (a leaked token being
  // rotated away while its holder signs in): the sign-in fails like a wrong token.
  if (!(await store.createAgentSession(secretHash(id), agent.name, csrf, now, expiresAt, tokenHash))) return undefined;
  return { id, csrf, agent: agent.name, expiresAt };
}

/** Ends a session (signing out); nothing happens when it has already ended. */
export async function endAgentSession(store: AgentStore, id: string): Promise<void> {
  await store.endAgentSession(secretHash(id));
}

/** The session cookie's value, if the request carries one. */
export function sessionCookie(req: Request): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === AGENT_SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

/** The request's live session: undefined without a cookie, or once it expired, ended, or its agent was removed or given a new token. */
export async function sessionFromRequest(req: Request, store: AgentStore, now: number): Promise<AgentSession | undefined> {
  const id = sessionCookie(req);
  if (id === undefined) return undefined;
  const s = await store.agentSession(secretHash(id), now);
  return s && { id, csrf: s.csrf, agent: s.agent, expiresAt: s.expiresAt };
}
