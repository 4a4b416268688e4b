/**
 * The send queries of the PostgreSQL store (the next due time, the claim) under a backlog the statistics have not seen. Found from
 * outside: after ANALYZE had seen an outbox with almost nothing unsent, a backlog of a few
 * thousand unsent rows made "the head of each conversation" an anti-join that rescanned every
 * unsent row for every unsent row (2.9 million rows filtered for 1,700 unsent, ~1 s per call),
 * and sending fell behind while the backlog grew. The work a query does is read from EXPLAIN
 * ANALYZE's row counts, not from a clock: each head is found by an index lookup of its own
 * conversation, so the rows touched grow with the backlog, not with its square.
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { bound, claimArgs, PGW } from '../../src/store/postgres/work.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { postgres, T0, text, turn } from './helpers.js';

const clients: pg.Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.end();
});

interface PlanNode {
  readonly 'Actual Rows'?: number;
  readonly 'Actual Loops'?: number;
  readonly 'Rows Removed by Filter'?: number;
  readonly 'Rows Removed by Join Filter'?: number;
  readonly Plans?: readonly PlanNode[];
}

/** Every row every node of the plan produced or filtered out, over all its loops. */
function rowsTouched(node: PlanNode): number {
  const loops = node['Actual Loops'] ?? 1;
  const own = ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Join Filter'] ?? 0)) * loops;
  return own + (node.Plans ?? []).reduce((sum, p) => sum + rowsTouched(p), 0);
}

async function explain(c: pg.Client, sql: string, values: unknown[] = []): Promise<number> {
  const { rows } = await c.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, values);
  const plan = (rows[0] as { 'QUERY PLAN': [{ Plan: PlanNode }] })['QUERY PLAN'][0].Plan;
  return rowsTouched(plan);
}

describe('the outbox heads under a backlog the statistics never saw (postgres)', () => {
  it('finding the next due send and claiming heads touch rows in proportion to the backlog', async () => {
    const url = await freshDatabaseUrl();
    const store = await postgres.open(url);
    const conversations = 2_000;
    for (let k = 0; k < conversations; k += 200) {
      await Promise.all(
        Array.from({ length: 200 }, (_, i) => {
          const user = `+49151${String(k + i).padStart(8, '0')}`;
          return store.commitTurn(turn({ key: { botId: 'pizza', user }, outbox: [text('one'), text('two')] }));
        }),
      );
    }
    const c = new pg.Client({ connectionString: url });
    clients.push(c);
    await c.connect();
    // The statistics see an outbox where everything was sent; then a backlog builds (autovacuum
    // off for the table: its ANALYZE must not see the backlog before the queries run).
    await c.query('ALTER TABLE outbox SET (autovacuum_enabled = false)');
    await c.query(`UPDATE outbox SET state = 'sent', sent_at = $1`, [T0]);
    await c.query('ANALYZE outbox');
    await c.query(`UPDATE outbox SET state = 'pending', sent_at = NULL`);
    const backlog = conversations * 2;

    const nextDue = bound(PGW.nextDue, {});
    const next = await explain(c, nextDue.text);
    await c.query('BEGIN');
    const claimSends = bound(PGW.claimSends, claimArgs({ owner: 'test-owner', leaseMs: 60_000, lapsed: true }, 64, T0 + 1));
    const claim = await explain(c, claimSends.text, claimSends.values);
    await c.query('ROLLBACK');
    // The quadratic plans touched 1–24 million rows here; one pass over the backlog touches a few per row.
    expect(next).toBeLessThan(backlog * 20);
    expect(claim).toBeLessThan(backlog * 20);

    // And the answers are the heads: the first message of each conversation, due now.
    expect((await c.query(nextDue.text)).rows[0]).toEqual({ t: String(T0) });
    const claimed = await store.claim({ owner: 'test-owner', leaseMs: 60_000, lapsed: true }, { kind: 'send', limit: 5_000, now: T0 + 1 });
    expect(claimed).toHaveLength(conversations);
    expect(new Set(claimed.map((o) => o.conversationId)).size).toBe(conversations);
    expect(claimed.every((o) => (o.message as { text?: string }).text === 'one')).toBe(true);
  });
});
