/**
 * "colloquy agents remove NAME: its sessions and claims end at once". The API
 * checks the token, then claims; removeAgent runs between the two (another process, the CLI) and
 * the claim lands for an agent that no longer exists: nobody can write or release it (the token is
 * refused), and with handoffClaimIdleMs 0 it never ends. On PostgreSQL the interleaving is made
 * certain by holding the handoff's row while removeAgent runs. A sign-in racing a removal is
 * refused, never a foreign-key error.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { blockedOnLock } from '../support/postgres.js';
import { BOB, DIALECTS, T0, turn } from './helpers.js';

const OPEN = { open: { queue: 'billing', timeoutMs: 600_000 } } as const;

describe.each(DIALECTS)('$name', ({ name, open, fresh }) => {
  it('a claim by an agent its token no longer names (removed) is refused by the store', async () => {
    const s = await open();
    await s.addAgent('ana', 'a'.repeat(64), T0);
    const { conversationId: id } = await s.commitTurn(turn({ handoff: OPEN }));
    await s.removeAgent('ana', { now: T0, notify: false });
    // What POST /agent/handoffs/:id/claim does with the token it checked a moment ago.
    const r = await s.claimHandoff(id, 'ana', { now: T0 + 1, notify: false, claimIdleMs: 0, via: 'token' });
    expect(r.ok).toBe(false);
    expect(await s.openHandoff(id)).toMatchObject({ state: 'waiting' });
  });

  it.runIf(name === 'postgres')('a claim in flight while its agent is removed does not outlive the removal', async () => {
    const where = await fresh();
    const s = await open(where);
    const other = await open(where);
    await s.addAgent('ana', 'a'.repeat(64), T0);
    const { conversationId: id } = await s.commitTurn(turn({ key: BOB, handoff: OPEN }));
    const c = new pg.Client({ connectionString: where });
    await c.connect();
    try {
      await c.query('BEGIN');
      await c.query('SELECT id FROM handoffs WHERE conversation_id = $1 FOR UPDATE', [id]); // e.g. a user message being held
      const claim = s.claimHandoff(id, 'ana', { now: T0 + 1, notify: false, claimIdleMs: 0, via: 'token' }); // token checked: ana exists
      await blockedOnLock(where);
      // The removal runs meanwhile: it waits for the claim (which holds ana's row), or the claim for it.
      const removal = other.removeAgent('ana', { now: T0 + 2, notify: false });
      await c.query('COMMIT');
      await claim;
      expect(await removal).toMatchObject({ removed: true });
    } finally {
      await c.end();
    }
    expect(await s.agents()).toEqual([]);
    // Removed: nothing may stay claimed by ana.
    expect(await s.openHandoff(id)).not.toMatchObject({ state: 'claimed', agent: 'ana' });
  });
});

describe.each(DIALECTS.filter((d) => d.name === 'postgres'))('$name: sign-in racing a removal', ({ open, fresh }) => {
  it('a session opened while its agent is being removed is refused, not an error', async () => {
    const where = await fresh();
    const s = await open(where);
    await s.addAgent('ana', 'a'.repeat(64), T0);
    const c = new pg.Client({ connectionString: where });
    await c.connect();
    try {
      // What removeAgent does, held open at its start: the agent's row locked, then deleted.
      await c.query('BEGIN');
      await c.query('SELECT name FROM agents WHERE name = $1 FOR UPDATE', ['ana']);
      const signIn = s.createAgentSession('b'.repeat(64), 'ana', 'csrf', T0, T0 + 3_600_000);
      await blockedOnLock(where);
      await c.query('DELETE FROM agent_sessions WHERE agent = $1', ['ana']);
      await c.query('DELETE FROM agents WHERE name = $1', ['ana']);
      await c.query('COMMIT');
      expect(await signIn).toBe(false);
    } finally {
      await c.end();
    }
    expect(await s.agentSession('b'.repeat(64), T0)).toBeUndefined();
  });
});
