/**
 * The SQLite store's agent methods ({@link AgentStore}): agents, their inbox sessions, notes and the
 * handoff log. The reads answer at once; the writes are synchronous, for the store to run each in
 * its own savepoint of a group commit, like handoffs.ts (whose log and queue it writes through).
 */
import type Database from 'better-sqlite3';
import { toAgent, toAgentSession, toLogEntry } from '../agent-rows.js';
import type { AgentActor, AgentRecord, AgentSessionRecord, AgentStore, HandoffLogEntry } from '../agent-types.js';
import type { HandoffRefusal, HandoffWrite } from '../handoff-types.js';
import { toHandoff } from '../rows.js';
import type { SqliteHandoffs } from './handoffs.js';

type Row = Record<string, unknown>;

const SQL = {
  add: 'INSERT INTO agents (name, token_hash, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING',
  setToken: 'UPDATE agents SET token_hash = ? WHERE name = ?',
  list: 'SELECT name, created_at FROM agents ORDER BY name',
  byTokenHash: 'SELECT name, created_at FROM agents WHERE token_hash = ?',
  byName: 'SELECT name FROM agents WHERE name = ?',
  remove: 'DELETE FROM agents WHERE name = ?',
  claimsOf: `SELECT * FROM handoffs WHERE state = 'claimed' AND agent = ? ORDER BY id`,
  endSessionsOf: 'DELETE FROM agent_sessions WHERE agent = ?',
  hasEvents: 'SELECT 1 FROM handoff_events WHERE handoff_id = ? LIMIT 1',
  dropExpired: 'DELETE FROM agent_sessions WHERE expires_at <= ?',
  createSession: `INSERT INTO agent_sessions (id_hash, agent, csrf, created_at, expires_at)
    SELECT @idHash, name, @csrf, @now, @expiresAt FROM agents WHERE name = @agent AND (@tokenHash IS NULL OR token_hash = @tokenHash)`,
  session: 'SELECT * FROM agent_sessions WHERE id_hash = ? AND expires_at > ?',
  endSession: 'DELETE FROM agent_sessions WHERE id_hash = ?',
  log: 'SELECT * FROM handoff_log WHERE conversation_id = ? ORDER BY id',
} as const;

type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

type Removed = Awaited<ReturnType<AgentStore['removeAgent']>>;
type Noted = { ok: true; entry: HandoffLogEntry } | HandoffRefusal;

/** The agent part of the SQLite store (its {@link AgentStore} methods call these). */
export class SqliteAgents {
  private readonly q: Statements;

  constructor(
    db: Database.Database,
    private readonly h: SqliteHandoffs,
  ) {
    this.q = Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;
  }

  addAgent(name: string, tokenHash: string, now: number): boolean {
    return this.q.add.run(name, tokenHash, now).changes === 1;
  }

  setAgentToken(name: string, tokenHash: string): boolean {
    if (this.q.setToken.run(tokenHash, name).changes !== 1) return false;
    this.q.endSessionsOf.run(name); // sessions made from the old token end with it
    return true;
  }

  async agents(): Promise<AgentRecord[]> {
    return (this.q.list.all() as Row[]).map(toAgent);
  }

  async agentByTokenHash(tokenHash: string): Promise<AgentRecord | undefined> {
    const r = this.q.byTokenHash.get(tokenHash) as Row | undefined;
    return r && toAgent(r);
  }

  removeAgent(name: string, w: HandoffWrite): Removed {
    if (this.q.byName.get(name) === undefined) return { removed: false, sessions: 0, claims: 0 };
    const sessions = this.q.endSessionsOf.run(name).changes;
    let claims = 0;
    for (const h of (this.q.claimsOf.all(name) as Row[]).map(toHandoff)) {
      // A helpdesk that heard of this handoff hears it went back, whatever the remover's environment says.
      const told = w.notify || this.q.hasEvents.get(h.id) !== undefined;
      if (this.h.returnClaimToQueue(h, 'agent_removed', { ...w, notify: told })) claims++;
    }
    this.q.remove.run(name);
    return { removed: true, sessions, claims };
  }

  createAgentSession(idHash: string, agent: string, csrf: string, now: number, expiresAt: number, tokenHash?: string): boolean {
    this.q.dropExpired.run(now); // expired sessions are only ever refused: they go when the next one opens
    return this.q.createSession.run({ idHash, csrf, now, expiresAt, agent, tokenHash: tokenHash ?? null }).changes === 1;
  }

  async agentSession(idHash: string, now: number): Promise<AgentSessionRecord | undefined> {
    const r = this.q.session.get(idHash, now) as Row | undefined;
    return r && toAgentSession(r);
  }

  endAgentSession(idHash: string): void {
    this.q.endSession.run(idHash);
  }

  addHandoffNote(conversationId: number, actor: AgentActor, text: string, now: number): Noted {
    const h = this.h.openRow(conversationId);
    if (!h) return { ok: false, reason: 'none' };
    this.h.touchClaim(h.id, actor.name, now); // a note is activity: the holder's claim stays theirs
    return { ok: true, entry: this.h.log({ handoffId: h.id, conversationId, action: 'note', agent: actor.name, via: actor.via, text, at: now }) };
  }

  async handoffLog(conversationId: number): Promise<HandoffLogEntry[]> {
    return (this.q.log.all(conversationId) as Row[]).map(toLogEntry);
  }
}
