/**
 * The statements a received message costs on PostgreSQL: its lane is claimed by the inbound's own
 * statement, and after the turn one statement looks for more work and releases the lane. No claim
 * by key (the store has no separate "next inbound?" read or release any more).
 */
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestBot, type TestConversation } from '../../src/simulator/testing.js';
import orderBot from '../fixtures/order-bot.js';
import { freshDatabaseUrl } from '../support/postgres.js';

let conv: TestConversation | undefined;
let restore: (() => void) | undefined;
afterEach(async () => {
  restore?.();
  restore = undefined;
  await conv?.close();
  conv = undefined;
});

/** Records the name (or the first words) of every statement any node-postgres client sends. */
function recordStatements(): string[] {
  const seen: string[] = [];
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const q = args[0] as string | { name?: string; text?: string };
    seen.push(typeof q === 'string' ? q.slice(0, 40) : (q.name ?? q.text?.slice(0, 40) ?? '?'));
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  restore = () => {
    pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
  };
  return seen;
}

describe('the round trips of a message (postgres)', () => {
  it('a message claims its lane with the inbound and releases it with the look for more', async () => {
    const c = (conv = await createTestBot(orderBot, { database: await freshDatabaseUrl() }));
    await c.type('hi');
    const seen = recordStatements();
    await c.tap('Margherita');
    c.expectState('size');
    expect(seen).toContain('colloquy_add_inbound_claiming');
    expect(seen).toContain('colloquy_next_or_release_lane');
    for (const separate of ['colloquy_claim_lane', 'colloquy_claim_lane_many']) {
      expect(seen).not.toContain(separate);
    }
    // The lane was released: another process may take the conversation's next message.
    const lanes = await c.store.claim({ owner: 'another-process', leaseMs: 60_000, lapsed: false }, { kind: 'lane', limit: 1, now: Date.now(), key: { botId: orderBot.id, user: c.user } });
    expect(lanes).toHaveLength(1);
  });
});
