/**
 * The SQLite store's lanes: who runs a conversation's work. Every function here runs inside a write
 * of the group commit (one transaction holds SQLite's write lock), so two claimants never take the
 * same lane. Leases are set and compared on the store's clock (see `SqliteStoreOptions.now`).
 */
import type Database from 'better-sqlite3';
import { toInbox, toKey } from '../rows.js';
import { sqliteArgs, WORK_SQL } from '../sql.js';
import type { Claimant, ConversationKey, HeldLane, LaneClaim, LaneNext } from '../types.js';

type Row = Record<string, unknown>;

const SQL = {
  lane: 'SELECT * FROM lanes WHERE bot_id = ? AND user_number = ?',
  ensure: 'INSERT INTO lanes (bot_id, user_number) VALUES (?, ?) ON CONFLICT (bot_id, user_number) DO NOTHING',
  /** Lanes with work and no live claim (a lapsed one only when asked), the oldest pending inbound first. */
  claimable: `SELECT l.* FROM lanes l INDEXED BY lanes_with_work
    WHERE l.work_seq > l.done_seq AND (l.owner IS NULL OR (@lapsed AND l.lease_until <= @dbnow))
    ORDER BY (SELECT MIN(i.id) FROM inbox i WHERE i.bot_id = l.bot_id AND i.user_number = l.user_number AND i.state = 'pending')
    LIMIT @limit`,
  take: `UPDATE lanes SET owner = @owner, lease_until = @until, fence = CASE WHEN owner IS @owner THEN fence ELSE fence + 1 END
    WHERE bot_id = @botId AND user_number = @user`,
  renew: WORK_SQL.renewLanes,
  release: WORK_SQL.releaseLane,
  nextInbox: `SELECT * FROM inbox WHERE bot_id = ? AND user_number = ? AND state = 'pending' ORDER BY id LIMIT 1`,
} as const;

type Statements = { readonly [K in keyof typeof SQL]: Database.Statement };

/** The lane part of the SQLite store's work; each method runs inside a transaction the caller holds. */
export class SqliteLanes {
  private readonly q: Statements;

  /** @param now The lease clock. */
  constructor(
    db: Database.Database,
    private readonly now: () => number,
  ) {
    this.q = Object.fromEntries(Object.entries(SQL).map(([name, sql]) => [name, db.prepare(sql)])) as Statements;
  }

  /** See `Store.claim` of kind `lane`: that lane by its key, or up to `limit` lanes with work. */
  claim(who: Claimant, limit: number, key?: ConversationKey): LaneClaim[] {
    const now = this.now();
    const rows = key ? this.claimableByKey(who, key, now) : (this.q.claimable.all(sqliteArgs({ dbnow: now, limit, lapsed: who.lapsed })) as Row[]);
    return rows.slice(0, limit).map((r) => {
      const k = toKey(r);
      this.q.take.run({ owner: who.owner, until: now + who.leaseMs, botId: k.botId, user: k.user });
      const mine = r['owner'] === who.owner;
      return { key: k, fence: Number(r['fence']) + (mine ? 0 : 1), workSeq: Number(r['work_seq']), takeover: r['owner'] !== null && !mine };
    });
  }

  /** The lane (created when missing), unless another owner's claim on it is live, or lapsed and `who` takes no lapsed claims. */
  private claimableByKey(who: Claimant, key: ConversationKey, now: number): Row[] {
    // The lane almost always exists (its inbound bumped it): insert only when it does not.
    let row = this.q.lane.get(key.botId, key.user) as Row | undefined;
    if (row === undefined) {
      this.q.ensure.run(key.botId, key.user);
      row = this.q.lane.get(key.botId, key.user) as Row;
    }
    const owner = row['owner'];
    const lapsed = Number(row['lease_until'] ?? 0) <= now;
    return owner === null || owner === who.owner || (who.lapsed && lapsed) ? [row] : [];
  }

  /** Extends every lane `owner` holds to `leaseMs` from `dbnow` (the lease clock's now); the lanes it holds. */
  renew(args: { readonly owner: string; readonly leaseMs: number; readonly dbnow: number }): HeldLane[] {
    return (this.q.renew.all(args) as Row[]).map((r) => ({ key: toKey(r), fence: Number(r['fence']), workSeq: Number(r['work_seq']) }));
  }

  /** See `Store.settleLane`: the oldest pending inbound, or the lane released, while `owner` holds it with `fence` and `seen` is still its counter. */
  settle(owner: string, key: ConversationKey, fence: number, seen: number | null): LaneNext {
    const lane = this.q.lane.get(key.botId, key.user) as Row | undefined;
    if (!lane || lane['owner'] !== owner || Number(lane['fence']) !== fence) return { outcome: 'lost' };
    const next = this.q.nextInbox.get(key.botId, key.user) as Row | undefined;
    if (next) return { outcome: 'next', inbound: toInbox(next) };
    if (seen === null) return { outcome: 'idle' }; // a live actor keeps its lane
    if (this.q.release.run({ owner, fence, seen, botId: key.botId, user: key.user }).changes === 1) return { outcome: 'released' };
    return { outcome: 'more', workSeq: Number(lane['work_seq']) };
  }
}
