/**
 * `handoffs.timeout_ms` is nullable (0016 fills the rows it finds; a handoff
 * written without it — by a process older than 0016 on a migrated database — has NULL). Returning
 * such a claim to the queue computes `timeout_at = now + NULL`, the timer's fire_at NULL fails
 * NOT NULL, and the whole look fails: no other idle claim in the batch goes back either, on every look.
 */
import Database from 'better-sqlite3';
import { expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { ALICE, BOB, T0, WORKER, turn } from './helpers.js';
import { tempDir } from '../support/temp.js';

it('one claim without a timeout_ms does not stop the others from going back', async () => {
  const dir = tempDir();
  const file = dir.path('c.db');
  const s = await openStore(file);
  try {
    const OPEN = { open: { queue: 'q', timeoutMs: 600_000 } } as const;
    const a = await s.commitTurn(turn({ key: ALICE, handoff: OPEN }));
    const b = await s.commitTurn(turn({ key: BOB, handoff: OPEN }));
    const raw = new Database(file);
    raw.prepare('UPDATE handoffs SET timeout_ms = NULL WHERE conversation_id = ?').run(a.conversationId);
    raw.close();
    for (const id of [a.conversationId, b.conversationId]) await s.claimHandoff(id, 'ana', { now: T0, notify: false, claimIdleMs: 1000 });
    await s.claim(WORKER, { kind: 'idle', limit: 10, now: T0 + 1000, notify: false }).catch(() => undefined);
    expect(await s.openHandoff(b.conversationId)).toMatchObject({ state: 'waiting' });
  } finally {
    await s.close();
    dir.remove();
  }
});
