/** A young PostgreSQL database gets its hot tables analyzed once its first turns are committed. */
import { describe, expect, it } from 'vitest';
import { ANALYZE_AFTER_TURNS, analyzeUnanalyzed } from '../../src/store/postgres/analyze.js';
import type { PgStore } from '../../src/store/postgres/store.js';
import { eventually } from '../support/eventually.js';
import { ALICE, inbound, postgres, T0, turn } from './helpers.js';

const analyzed = async (store: PgStore): Promise<string[]> =>
  (
    await store.db.query(
      `SELECT relname FROM pg_stat_user_tables WHERE relname IN ('conversations', 'inbox', 'outbox', 'lanes', 'timers')
        AND (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL) ORDER BY relname`,
    )
  ).rows.map((r) => String(r['relname']));

describe('statistics of a young database (postgres)', () => {
  it('analyzes the hot tables that never were, once', async () => {
    const store = (await postgres.open()) as PgStore;
    const { id } = await store.addInbound(inbound());
    await store.commitTurn(turn({ inboxId: id }));
    expect(await analyzed(store)).toEqual([]);
    expect(await analyzeUnanalyzed(store.db)).toEqual(['conversations', 'inbox', 'lanes', 'outbox', 'timers']);
    expect(await analyzed(store)).toEqual(['conversations', 'inbox', 'lanes', 'outbox', 'timers']);
    expect(await analyzeUnanalyzed(store.db)).toEqual([]);
  });

  it(`a store analyzes them by itself after ${ANALYZE_AFTER_TURNS} turns`, async () => {
    const store = (await postgres.open()) as PgStore;
    for (let i = 0; i < ANALYZE_AFTER_TURNS; i++) {
      const key = { ...ALICE, user: `+49151${String(i).padStart(8, '0')}` };
      const { id } = await store.addInbound(inbound({ ...key, providerId: `wamid.${i}` }));
      await store.commitTurn(turn({ key, inboxId: id, now: T0 + i, flowToken: `flow-${i}` }));
    }
    await eventually(async () => expect(await analyzed(store)).toEqual(['conversations', 'inbox', 'lanes', 'outbox', 'timers']), { what: 'the hot tables analyzed' });
  });
});
