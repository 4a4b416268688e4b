/**
 * The PostgreSQL store's agent methods ({@link AgentStore}), ported from SQLite's `agents.ts`: each
 * write one transaction; removing an agent locks its row, then each handoff it holds (in id order,
 * as claims and releases lock them) before putting it back in the queue.
 */
import { toAgent, toAgentSession, toLogEntry } from '../agent-rows.js';
import type { AgentActor, AgentRecord, AgentSessionRecord, AgentStore, HandoffLogEntry } from '../agent-types.js';
import type { HandoffRefusal, HandoffWrite } from '../handoff-types.js';
import { toHandoff } from '../rows.js';
import type { PgDb } from './db.js';
import { returnClaimToQueueIn } from './handoff-claims.js';
import { lockOpen, logIn, touchClaimIn } from './handoffs.js';

/** The agent statements, in PostgreSQL's dialect. */
const PGA = {
  add: 'INSERT INTO agents (name, token_hash, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING',
  setToken: 'UPDATE agents SET token_hash = $2 WHERE name = $1',
  list: 'SELECT name, created_at FROM agents ORDER BY name',
  byTokenHash: 'SELECT name, created_at FROM agents WHERE token_hash = $1',
  lock: 'SELECT name FROM agents WHERE name = $1 FOR UPDATE',
  remove: 'DELETE FROM agents WHERE name = $1',
  claimsOf: `SELECT * FROM handoffs WHERE state = 'claimed' AND agent = $1 ORDER BY id FOR UPDATE`,
  endSessionsOf: 'DELETE FROM agent_sessions WHERE agent = $1',
  hasEvents: 'SELECT 1 FROM handoff_events WHERE handoff_id = $1 LIMIT 1',
  dropExpired: 'DELETE FROM agent_sessions WHERE expires_at <= $1',
  createSession: `INSERT INTO agent_sessions (id_hash, agent, csrf, created_at, expires_at)
    SELECT $1, name, $2, $3, $4 FROM agents WHERE name = $5 AND ($6::text IS NULL OR token_hash = $6) FOR KEY SHARE`,
  session: 'SELECT * FROM agent_sessions WHERE id_hash = $1 AND expires_at > $2',
  endSession: 'DELETE FROM agent_sessions WHERE id_hash = $1',
  log: 'SELECT * FROM handoff_log WHERE conversation_id = $1 ORDER BY id',
} as const;

type Removed = Awaited<ReturnType<AgentStore['removeAgent']>>;
type Noted = { ok: true; entry: HandoffLogEntry } | HandoffRefusal;

/** The agent part of the PostgreSQL store. */
export class PgAgents implements AgentStore {
  constructor(private readonly db: PgDb) {}

  async addAgent(name: string, tokenHash: string, now: number): Promise<boolean> {
    return (await this.db.query(PGA.add, [name, tokenHash, now])).rowCount === 1;
  }

  async setAgentToken(name: string, tokenHash: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      if ((await q.query(PGA.setToken, [name, tokenHash])).rowCount !== 1) return false;
      await q.query(PGA.endSessionsOf, [name]); // sessions made from the old token end with it
      return true;
    });
  }

  async agents(): Promise<AgentRecord[]> {
    return (await this.db.query(PGA.list)).rows.map(toAgent);
  }

  async agentByTokenHash(tokenHash: string): Promise<AgentRecord | undefined> {
    const r = (await this.db.query(PGA.byTokenHash, [tokenHash])).rows[0];
    return r && toAgent(r);
  }

  async removeAgent(name: string, w: HandoffWrite): Promise<Removed> {
    return this.db.tx(async (q): Promise<Removed> => {
      if ((await q.query(PGA.lock, [name])).rows.length === 0) return { removed: false, sessions: 0, claims: 0 };
      const sessions = (await q.query(PGA.endSessionsOf, [name])).rowCount ?? 0;
      let claims = 0;
      for (const h of (await q.query(PGA.claimsOf, [name])).rows.map(toHandoff)) {
        // A helpdesk that heard of this handoff hears it went back, whatever the remover's environment says.
        const told = w.notify || (await q.query(PGA.hasEvents, [h.id])).rows.length > 0;
        if (await returnClaimToQueueIn(q, h, 'agent_removed', { ...w, notify: told })) claims++;
      }
      await q.query(PGA.remove, [name]);
      return { removed: true, sessions, claims };
    });
  }

  async createAgentSession(idHash: string, agent: string, csrf: string, now: number, expiresAt: number, tokenHash?: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      await q.query(PGA.dropExpired, [now]); // expired sessions are only ever refused: they go when the next one opens
      // The agent's row is share-locked: a removal or rotation running now commits first (and the
      // insert finds no row) or after (and ends this session with the others).
      return (await q.query(PGA.createSession, [idHash, csrf, now, expiresAt, agent, tokenHash ?? null])).rowCount === 1;
    });
  }

  async agentSession(idHash: string, now: number): Promise<AgentSessionRecord | undefined> {
    const r = (await this.db.query(PGA.session, [idHash, now])).rows[0];
    return r && toAgentSession(r);
  }

  async endAgentSession(idHash: string): Promise<void> {
    await this.db.query(PGA.endSession, [idHash]);
  }

  async addHandoffNote(conversationId: number, actor: AgentActor, text: string, now: number): Promise<Noted> {
    return this.db.tx(async (q): Promise<Noted> => {
      const h = await lockOpen(q, conversationId);
      if (!h) return { ok: false, reason: 'none' };
      await touchClaimIn(q, h.id, actor.name, now); // a note is activity: the holder's claim stays theirs
      return { ok: true, entry: await logIn(q, { handoffId: h.id, conversationId, action: 'note', agent: actor.name, via: actor.via, text, at: now }) };
    });
  }

  async handoffLog(conversationId: number): Promise<HandoffLogEntry[]> {
    return (await this.db.query(PGA.log, [conversationId])).rows.map(toLogEntry);
  }
}
