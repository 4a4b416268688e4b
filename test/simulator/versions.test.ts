/** The harness and checkRehydration started from a conversation an older bot version stored. */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { checkRehydration, createTestBot, ExpectationError } from '../../src/simulator/testing.js';
import { renameToPickSize, shop, shopMachine } from '../fixtures/shop-versions.js';

/** What version 1 stored for a conversation that tapped "Order" (and, with `large`, "Large"). */
function v1Snapshot(large = false): unknown {
  const actor = createActor(shopMachine()).start();
  actor.send({ type: 'reply.order' });
  if (large) actor.send({ type: 'reply.large' });
  const snapshot = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as unknown;
  actor.stop();
  return snapshot;
}

const large = { type: 'reply.large', id: 'large', title: 'Large', via: 'button' };
const thin = { type: 'reply.thin', id: 'thin', title: 'Thin', via: 'button' };

describe('createTestBot({ from })', () => {
  it('loads the older conversation as the runtime would after a deploy: migrated, and it goes on', async () => {
    const conv = await createTestBot(shop(2, { sizeState: 'pickSize' }, renameToPickSize), { from: { snapshot: v1Snapshot(), version: 1 } });
    try {
      await conv.send(large);
      conv.expectState('ordering.crust');
      expect(conv.conversation?.botVersion).toBe(2);
      expect(conv.context).toEqual({ size: 'large', tag: 'migrated' });
      await conv.tap('Thin');
      conv.expectText('Done: large thin (migrated)');
    } finally {
      await conv.close();
    }
  });

  it("keeps the older conversation's timers under their renamed state", async () => {
    const key = 'xstate.after.60000.shop.ordering.size';
    const conv = await createTestBot(shop(2, { sizeState: 'pickSize' }, renameToPickSize), {
      from: { snapshot: v1Snapshot(), version: 1, timers: [{ key, stateNode: 'shop.ordering.size', event: { type: key }, fireAt: Date.UTC(2026, 0, 1, 12, 1) }] },
    });
    try {
      await conv.type('what?'); // unhandled: the state stays, the migration commits
      await conv.advance('2m');
      conv.expectText('Order timed out');
    } finally {
      await conv.close();
    }
  });
});

describe('checkRehydration({ from })', () => {
  it('runs the migrated conversation alone and through the store, and they agree', async () => {
    const runs = await checkRehydration(shop(2, { sizeState: 'pickSize' }, renameToPickSize), [{ event: large }, { event: thin }], { from: { snapshot: v1Snapshot(), version: 1 } });
    expect(runs.memory.states).toEqual(['{"ordering":"crust"}', 'done']);
    expect(runs.restarted.final).toMatchObject({ status: 'done', context: { size: 'large', crust: 'thin', tag: 'migrated' } });
  });

  it('says which state the new version lacks when no migration carries it', async () => {
    const v3 = shop(3, { sizeState: 'pickSize', crust: false }, renameToPickSize);
    const check = checkRehydration(v3, [{ event: thin }], { from: { snapshot: v1Snapshot(true), version: 1 } });
    await expect(check).rejects.toThrow(ExpectationError);
    await expect(checkRehydration(v3, [{ event: thin }], { from: { snapshot: v1Snapshot(true), version: 1 } })).rejects.toThrow(
      /The version-1 conversation is in ordering\.crust after the migrations, which version 3 of bot "shop" does not have \(onIncompatible 'restart' would apply\)/,
    );
  });
});
