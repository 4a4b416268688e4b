/** Bot versions: migrations of running conversations, pinning, and what no version covers, on both engines. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BotError, ConfigError, defineBot, type Bot } from '../../src/index.js';
import { ManualClock } from '../../src/conversation/clock.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { renameToPickSize, shop, shopMachine } from '../fixtures/shop-versions.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { ENGINES, USER, freshDatabase, reply, sandbox, textEvent, world, type Engine, type World } from './helpers.js';
import { tempDir, type TempDir } from '../support/temp.js';

let sb: RunningSandbox;
let dir: TempDir;
let dbs = 0;
beforeAll(async () => {
  sb = await sandbox();
  dir = tempDir();
});
afterAll(async () => {
  await sb.close();
  dir.remove();
});

/** A new, empty database on `engine` that several worlds in turn open. */
const dbPath = (engine: Engine): Promise<string> => freshDatabase(engine, dir.dir, `versions${++dbs}.db`);

const OTHER = '5215500000077';

/** Runs version 1 until the conversation waits in `ordering.size`, then stops; returns the database and clock. */
async function leftInSize(engine: Engine, user = USER): Promise<{ path: string; clock: ManualClock }> {
  const path = await dbPath(engine);
  const clock = new ManualClock();
  const w = await world([shop(1)], { engine, path, sb, clock });
  await w.send(textEvent('hi'), user);
  await w.send(reply('order'), user);
  expect((await w.store.activeConversation({ botId: 'shop', user }))!.state).toBe('{"ordering":"size"}');
  await w.stop();
  return { path, clock };
}

async function lastTexts(w: World<Store>, user = USER, n = 1): Promise<string[]> {
  const entries = await w.runtime.transcript({ botId: 'shop', user });
  return entries.flatMap((e) => (e.direction === 'out' ? [JSON.stringify(e.record.message)] : [])).slice(-n);
}

describe('defineBot versions', () => {
  it('defaults to version 1 and restart; rejects a bad version, policy or migration naming the bot', () => {
    const v1 = shop(1);
    expect(v1.version).toBe(1);
    expect(v1.onIncompatible).toBe('restart');
    for (const version of [0, -1, 1.5, Number.NaN]) expect(() => shop(version)).toThrow(/Bot "shop": version must be a positive integer/);
    expect(() => shop(2, {}, undefined, 'explode' as never)).toThrow(/Bot "shop": onIncompatible must be one of 'restart', 'end', 'fail'/);
    expect(() => shop(2, {}, { 3: {} })).toThrow(/Bot "shop": migration key "3" must be a version from 2 to 2/);
    expect(() => shop(2, {}, { 1: {} })).toThrow(BotError);
    expect(() => shop(2, {}, { 2: { states: { 'ordering.size': 'ordering.nowhere' } } })).toThrow(/renames a state to "ordering.nowhere", which this version's machine does not have/);
    expect(() => shop(2, {}, { 2: { states: { '': 'menu' } } })).toThrow(/dotted state paths/);
  });
});

describe.each(ENGINES)('on %s', (engine) => {
  describe('migrating a running conversation', () => {
    it('renames its state, transforms its context, and the conversation goes on where it was', async () => {
      const { path, clock } = await leftInSize(engine);
      const w = await world([shop(2, { sizeState: 'pickSize' }, renameToPickSize)], { engine, path, sb, clock });
      await w.send(reply('large'));
      const conv = (await w.store.activeConversation({ botId: 'shop', user: USER }))!;
      expect(conv.state).toBe('{"ordering":"crust"}');
      expect(conv.botVersion).toBe(2);
      expect((conv.snapshot as { context: unknown }).context).toEqual({ size: 'large', tag: 'migrated' });
      expect(w.runtime.metrics.value('colloquy_conversations_migrated_total', { bot: 'shop', from: '1', to: '2' })).toBe(1);
      await w.send(reply('thin'));
      expect(await lastTexts(w)).toEqual([JSON.stringify({ kind: 'text', text: 'Done: large thin (migrated)' })]);
      await w.stop();
    });

    it('keeps its pending timer under the renamed state, and the timer still fires', async () => {
      const { path, clock } = await leftInSize(engine);
      const w = await world([shop(2, { sizeState: 'pickSize' }, renameToPickSize)], { engine, path, sb, clock });
      const convId = (await w.store.activeConversation({ botId: 'shop', user: USER }))!.id;
      expect((await w.store.timers(convId)).map((t) => t.key)).toEqual(['xstate.after.60000.shop.ordering.size']);
      await w.send(textEvent('what?')); // unhandled: a re-prompt, the state stays
      const timers = await w.store.timers(convId);
      expect(timers.map((t) => [t.key, t.stateNode, t.event.type])).toEqual([['xstate.after.60000.shop.ordering.pickSize', 'shop.ordering.pickSize', 'xstate.after.60000.shop.ordering.pickSize']]);
      clock.advance(61_000);
      await w.runtime.poke();
      await w.runtime.idle();
      expect(await lastTexts(w)).toEqual([JSON.stringify({ kind: 'text', text: 'Order timed out' })]);
      expect((await w.store.conversation(convId))!.status).toBe('done');
      await w.stop();
    });

    it("a timer that fired before the migration is delivered under the state's new name", async () => {
      const { path, clock } = await leftInSize(engine);
      clock.advance(61_000);
      const store = await openStore(path);
      expect(await store.claim({ owner: 'x', leaseMs: 1_000, lapsed: true }, { kind: 'timer', limit: 10, now: clock.now() })).toHaveLength(1); // fired into the inbox, not yet run
      await store.close();
      const w = await world([shop(2, { sizeState: 'pickSize' }, renameToPickSize)], { engine, path, sb, clock });
      expect(await lastTexts(w)).toEqual([JSON.stringify({ kind: 'text', text: 'Order timed out' })]);
      await w.stop();
    });

    it('a migration that throws fails that turn visibly, keeps the conversation on its version, and is not retried', async () => {
      const { path, clock } = await leftInSize(engine);
      const broken = shop(
        2,
        { sizeState: 'pickSize' },
        {
          2: {
            states: { 'ordering.size': 'ordering.pickSize' },
            context: () => {
              throw new Error('no size table');
            },
          },
        },
      );
      const w = await world([broken], { engine, path, sb, clock });
      await w.send(reply('large'));
      const entries = await w.runtime.transcript({ botId: 'shop', user: USER });
      const last = entries.at(-1)!;
      expect(last).toMatchObject({ direction: 'in', state: 'failed' });
      expect(last.direction === 'in' && last.error).toMatch(/Bot "shop": migration 2 \(from version 1\) failed in state "ordering.size": no size table/);
      const conv = (await w.store.activeConversation({ botId: 'shop', user: USER }))!;
      expect([conv.botVersion, conv.state]).toEqual([1, '{"ordering":"size"}']);
      expect(w.runtime.metrics.value('colloquy_turns_total', { bot: 'shop', outcome: 'error' })).toBe(1);
      // Another user is unaffected.
      await w.send(textEvent('hi'), OTHER);
      expect((await w.store.activeConversation({ botId: 'shop', user: OTHER }))!.state).toBe('menu');
      await w.stop();
    });
  });

  describe('pinning: several versions served at once', () => {
    it('new conversations start on the newest; a running one stays on its own version without a migration', async () => {
      const { path, clock } = await leftInSize(engine);
      const w = await world([shop(1), shop(2, { sizeState: 'pickSize' })], { engine, path, sb, clock });
      await w.send(reply('large'));
      const old = (await w.store.conversations({ botId: 'shop', user: USER }))[0]!;
      expect([old.botVersion, old.state]).toEqual([1, '{"ordering":"crust"}']);
      await w.send(textEvent('hi'), OTHER);
      await w.send(reply('order'), OTHER);
      const fresh = (await w.store.activeConversation({ botId: 'shop', user: OTHER }))!;
      expect([fresh.botVersion, fresh.state]).toEqual([2, '{"ordering":"pickSize"}']);
      // When the old one ends, the user's next conversation starts on the newest.
      await w.send(reply('thin'));
      await w.send(textEvent('again'));
      expect((await w.store.activeConversation({ botId: 'shop', user: USER }))!.botVersion).toBe(2);
      await w.stop();
    });

    it('a running one moves to the newer version when that declares every step from it', async () => {
      const { path, clock } = await leftInSize(engine);
      const w = await world([shop(1), shop(2, { sizeState: 'pickSize' }, renameToPickSize)], { engine, path, sb, clock });
      await w.send(reply('small'));
      const conv = (await w.store.activeConversation({ botId: 'shop', user: USER }))!;
      expect([conv.botVersion, conv.state]).toEqual([2, '{"ordering":"crust"}']);
      await w.stop();
    });

    it('a migration that does not cover its state leaves it on its own version while that is served', async () => {
      const { path, clock } = await leftInSize(engine);
      const v1 = await world([shop(1)], { engine, path, sb, clock });
      await v1.send(textEvent('hi'), OTHER);
      await v1.send(reply('order'), OTHER);
      await v1.send(reply('large'), OTHER); // OTHER waits in ordering.crust, which version 3 drops
      await v1.stop();
      const w = await world([shop(1), shop(3, { sizeState: 'pickSize', crust: false }, { ...renameToPickSize, 3: {} })], { engine, path, sb, clock });
      await w.send(reply('thin'), OTHER);
      await w.send(reply('small'));
      const [pinned] = await w.store.conversations({ botId: 'shop', user: OTHER });
      expect([pinned!.botVersion, pinned!.status]).toEqual([1, 'done']);
      const moved = (await w.store.conversations({ botId: 'shop', user: USER }))[0]!;
      expect([moved.botVersion, moved.status, moved.state]).toEqual([3, 'done', 'done']);
      expect(w.runtime.metrics.total('colloquy_incompatible_conversations_total')).toBe(0);
      await w.stop();
    });

    it("a pinned conversation's messages follow its own version's fallback policy", async () => {
      const quiet = defineBot({ id: 'shop', machine: shopMachine(), options: { fallback: { enabled: false } } });
      const path = await dbPath(engine);
      const clock = new ManualClock();
      const first = await world([quiet], { engine, path, sb, clock });
      await first.send(textEvent('hi'));
      await first.send(reply('order'));
      await first.stop();
      sb.sandbox.faults.refuseInteractive(USER);
      try {
        const w = await world([quiet, shop(2, { sizeState: 'pickSize' })], { engine, path, sb, clock });
        await w.send(reply('large')); // version 1 (pinned) sends the crust question, which WhatsApp refuses
        const out = (await w.runtime.transcript({ botId: 'shop', user: USER })).flatMap((e) => (e.direction === 'out' ? [`${e.record.channel}:${e.record.state}`] : []));
        expect(out.at(-1)).toBe('interactive:failed'); // no SMS fallback: version 2's default policy does not apply
        expect(w.runtime.metrics.total('colloquy_fallbacks_total')).toBe(0);
        await w.stop();
      } finally {
        sb.sandbox.faults.clear();
      }
    });

    it('after a rollback (its version no longer served) an older version takes over a conversation whose state it has', async () => {
      const path = await dbPath(engine);
      const clock = new ManualClock();
      const v2 = await world([shop(2)], { engine, path, sb, clock });
      await v2.send(textEvent('hi'));
      await v2.send(reply('order'));
      await v2.stop();
      const w = await world([shop(1)], { engine, path, sb, clock });
      await w.send(reply('large'));
      const conv = (await w.store.activeConversation({ botId: 'shop', user: USER }))!;
      expect([conv.botVersion, conv.state]).toEqual([1, '{"ordering":"crust"}']);
      await w.stop();
    });
  });

  describe('onIncompatible: a state no version or migration covers', () => {
    /** Version 3 drops `ordering.crust`; the conversation waits there. */
    async function leftInCrust(): Promise<{ path: string; clock: ManualClock }> {
      const { path, clock } = await leftInSize(engine);
      const w = await world([shop(1)], { engine, path, sb, clock });
      await w.send(reply('large'));
      await w.stop();
      return { path, clock };
    }

    it("'restart' (the default) restarts it from the initial state, counted and logged", async () => {
      const { path, clock } = await leftInCrust();
      const w = await world([shop(3, { crust: false })], { engine, path, sb, clock });
      await w.send(reply('thin'));
      const conv = (await w.store.activeConversation({ botId: 'shop', user: USER }))!;
      expect([conv.botVersion, conv.state]).toEqual([3, 'menu']);
      expect(w.runtime.metrics.value('colloquy_incompatible_conversations_total', { bot: 'shop', version: '1', policy: 'restart' })).toBe(1);
      await w.stop();
    });

    it("'end' closes the conversation without running the inbound; the next message starts a new one", async () => {
      const { path, clock } = await leftInCrust();
      const w = await world([shop(3, { crust: false }, {}, 'end')], { engine, path, sb, clock });
      await w.send(reply('thin'));
      const [old] = await w.store.conversations({ botId: 'shop', user: USER });
      expect(old!.status).toBe('expired');
      const last = (await w.runtime.transcript(old!.id)).at(-1)!;
      expect(last.direction === 'in' && [last.state, last.error]).toEqual([
        'done',
        expect.stringMatching(/not run: the conversation ended because its state ordering.crust of version 1 exists neither in version 3/),
      ]);
      expect(w.runtime.metrics.value('colloquy_incompatible_conversations_total', { bot: 'shop', version: '1', policy: 'end' })).toBe(1);
      await w.send(textEvent('hi'));
      expect((await w.store.activeConversation({ botId: 'shop', user: USER }))!).toMatchObject({ botVersion: 3, state: 'menu' });
      await w.stop();
    });

    it("'fail' fails the conversation and keeps the inbound as failed with the reason", async () => {
      const { path, clock } = await leftInCrust();
      const w = await world([shop(3, { crust: false }, {}, 'fail')], { engine, path, sb, clock });
      await w.send(reply('thin'));
      const [old] = await w.store.conversations({ botId: 'shop', user: USER });
      expect(old!.status).toBe('failed');
      const last = (await w.runtime.transcript(old!.id)).at(-1)!;
      expect(last.direction === 'in' && [last.state, last.error]).toEqual([
        'failed',
        expect.stringMatching(/conversation \d+ failed: state ordering.crust of version 1 exists neither in version 3 of bot "shop"/),
      ]);
      expect(w.runtime.metrics.value('colloquy_incompatible_conversations_total', { bot: 'shop', version: '1', policy: 'fail' })).toBe(1);
      await w.stop();
    });
  });
});

describe('serving several versions', () => {
  it('refuses two bots with the same id and version, accepts different versions', async () => {
    await expect(world([shop(1), shop(1)], { sb })).rejects.toThrow(ConfigError);
    await expect(world([shop(1), shop(1)], { sb })).rejects.toThrow(/two bots have the id "shop" and version 1/);
    const w = await world([shop(1), shop(2, { sizeState: 'pickSize' })], { sb });
    expect(w.runtime.botVersions.map((b: Bot) => b.version)).toEqual([2, 1]);
    expect(w.runtime.botList.map((b: Bot) => b.version)).toEqual([2]);
    expect(w.runtime.bot('shop')!.version).toBe(2);
    await w.close().catch(() => undefined);
  });
});
