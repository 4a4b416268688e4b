/**
 * A live process takes over a dead one's conversations, with no new message and no restart: the
 * dead process's lane leases run out and the survivor's poll claims them (two processes, on each engine).
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Runtime, createHttpAdapter } from '../../src/entries/server.js';
import { openStore } from '../../src/store/open.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, type RunningSandbox } from '../../src/sandbox/index.js';
import { fromPromise, setup } from 'xstate';
import { defineBot, say, text, type TextEvent } from '../../src/index.js';
import { ManualClock } from '../../src/conversation/clock.js';
import counterBot from '../fixtures/counter-bot.js';
import { ENGINES, freshDatabase, holdingSandbox, killHard, queueSms, startCrashChild, type CrashChild } from './helpers.js';
import { execAt } from '../support/rows.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

describe.each(ENGINES)('on %s', (engine) => {
  let sb: RunningSandbox;
  let child: ChildProcess | undefined;
  const runtimes: Runtime[] = [];

  let releaseAll: () => void = () => {};

  beforeAll(async () => {
    // Latency faults sleep until released, so the test can let a held request go when it is done.
    ({ sb, releaseAll } = await holdingSandbox());
  });
  afterEach(async () => {
    child?.kill('SIGKILL');
    await Promise.all(
      runtimes.splice(0).map(async (r) => {
        await r.stop();
        await r.store.close();
      }),
    );
  });
  afterAll(async () => {
    releaseAll();
    await sb.close();
  });

  function startChild(db: string, env: Record<string, string>): CrashChild {
    const c = startCrashChild(db, sb.url, env);
    child = c.proc;
    return c;
  }

  async function survivor(db: string): Promise<Runtime> {
    const store = await openStore(db);
    const adapter = createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET });
    const runtime = new Runtime({ store, adapter, bots: [counterBot], sender: SANDBOX_SENDER, work: { leaseMs: 1_000, heartbeatMs: 300 }, pollMs: 200 });
    runtimes.push(runtime);
    await runtime.start();
    return runtime;
  }

  const texts = (user: string) => sb.sandbox.messagesTo(user).map((m) => (m.channel === 'sms' ? m.text : '?'));

  describe('takeover by a live process', () => {
    it('a process killed mid-turn: a live peer runs its acknowledged inbounds and what arrived meanwhile, once, in order', async () => {
      const db = await freshDatabase(engine, tmp.dir, 'takeover-1.db');
      const user = '5215500002001';
      const c = startChild(db, { COLLOQUY_TEST_HANG: '1', LEASE_MS: '1000' });
      await c.waitFor('ready');
      const peer = await survivor(db);
      c.send({ id: 'wamid.t1', user, text: 'first' });
      await c.waitFor('committed wamid.t1');
      // The first reply is out before the turn that hangs: a send still in flight at the kill would go again.
      await eventually(() => expect(texts(user)).toEqual(['#1']));
      c.send({ id: 'wamid.t2', user, text: 'hang' });
      await c.waitFor('hanging');
      await killHard(c.proc);
      // The peer gets the next message and a redelivery of one the dead process acknowledged.
      expect((await peer.receive({ botId: 'counter', user, providerId: 'wamid.t2', source: 'whatsapp', event: { type: 'text', text: 'hang' } })).duplicate).toBe(true);
      expect((await peer.receive({ botId: 'counter', user, providerId: 'wamid.t3', source: 'whatsapp', event: { type: 'text', text: 'third' } })).duplicate).toBe(false);
      await eventually(() => expect(texts(user).length).toBeGreaterThanOrEqual(3), { timeoutMs: 15_000, intervalMs: 50 });
      await peer.idle();
      expect(texts(user)).toEqual(['#1', '#2', '#3']);
      const conv = (await peer.store.conversations())[0]!;
      expect((conv.snapshot as { context: { seen: string[] } }).context.seen).toEqual(['first', 'hang', 'third']);
    });

    it("with no new message at all: the dead process's pending inbound is run by the peer", async () => {
      const db = await freshDatabase(engine, tmp.dir, 'takeover-2.db');
      const user = '5215500002002';
      const c = startChild(db, { COLLOQUY_TEST_HANG: '1', LEASE_MS: '1000' });
      await c.waitFor('ready');
      const peer = await survivor(db);
      c.send({ id: 'wamid.u1', user, text: 'hang' });
      await c.waitFor('hanging');
      await killHard(c.proc);
      await eventually(() => expect(texts(user).length).toBeGreaterThanOrEqual(1), { timeoutMs: 15_000, intervalMs: 50 });
      expect(texts(user)).toEqual(['#1']);
      expect((await peer.store.inbound(1))?.state).toBe('done');
    });

    it('a send in flight when its process died is sent again by an idle peer, once its lease runs out', async () => {
      const db = await freshDatabase(engine, tmp.dir, 'takeover-3.db');
      const user = '5215500002003';
      const c = startChild(db, { LEASE_MS: '1000' });
      await c.waitFor('ready');
      const peer = await survivor(db); // idle from here on: no message reaches it
      sb.sandbox.faults.latency(60_000, { endpoint: 'sms', times: 1 });
      c.send({ id: 'wamid.v1', user, text: 'hello' });
      await c.waitFor('committed wamid.v1');
      await eventually(() => expect(sb.sandbox.requestsTo('sms').length).toBeGreaterThanOrEqual(1), { timeoutMs: 10_000, intervalMs: 50 }); // the send is held by the provider
      await killHard(c.proc);
      await eventually(() => expect(texts(user).length).toBeGreaterThanOrEqual(1), { timeoutMs: 15_000, intervalMs: 50 });
      expect(texts(user)).toEqual(['#1']);
      // The provider has it before the peer records its answer.
      await eventually(async () => expect((await peer.store.outbound(1))?.state).toBe('sent'));
    });

    it('a send taken from a lapsed claim a second time is not sent a third time: it is kept failed, in_doubt', async () => {
      const db = await freshDatabase(engine, tmp.dir, 'takeover-doubt.db');
      const store = await openStore(db);
      const twice = { botId: 'counter', user: '5215500002011' };
      const once = { botId: 'counter', user: '5215500002012' };
      await queueSms(store, twice, 'sent twice already', 'ft_twice', Date.now());
      await queueSms(store, once, 'sent once already', 'ft_once', Date.now());
      // A process claimed both and died before recording either; another took the first and died too.
      await store.claim({ owner: 'dead-1', leaseMs: 60_000, lapsed: true }, { kind: 'send', limit: 10, now: Date.now() });
      await store.renew('dead-1', 0);
      expect(await store.claim({ owner: 'dead-2', leaseMs: 60_000, lapsed: true }, { kind: 'send', limit: 1, now: Date.now() })).toMatchObject([{ user: twice.user, resends: 1 }]);
      await store.renew('dead-2', 0);
      await store.close();
      const peer = await survivor(db);
      await eventually(async () => expect((await peer.store.outbound(2))?.state).toBe('sent'), { what: 'the row taken once sent again' });
      await eventually(async () => expect((await peer.store.outbound(1))?.state).toBe('failed'), { what: 'the row taken twice kept as failed' });
      await peer.idle();
      expect(texts(twice.user)).toEqual([]);
      expect(texts(once.user)).toEqual(['sent once already']);
      expect(await peer.store.outbound(1)).toMatchObject({ state: 'failed', errorCode: 'in_doubt', resends: 2 });
      expect(await peer.store.outbound(2)).toMatchObject({ state: 'sent', resends: 1 });
    });

    it('a timer armed by another process fires on a live one that never heard of it', async () => {
      const db = await freshDatabase(engine, tmp.dir, 'takeover-4.db');
      const user = '5215500002004';
      const remindBot = defineBot({
        id: 'remind',
        machine: setup({ types: { events: {} as TextEvent } }).createMachine({
          id: 'remind',
          initial: 'asked',
          states: { asked: { on: { text: 'waiting' } }, waiting: { entry: say(() => text('ok')), after: { 300: { target: 'asked', actions: say(() => text('reminder')) } } } },
        }),
      });
      // The process that arms the timer runs on a clock that never moves: it will never fire it itself.
      const armer = new Runtime({
        store: await openStore(db),
        adapter: createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET }),
        bots: [remindBot],
        sender: SANDBOX_SENDER,
        clock: new ManualClock(Date.now()),
      });
      runtimes.push(armer);
      await armer.start();
      const store = await openStore(db);
      const peer = new Runtime({
        store,
        adapter: createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET }),
        bots: [remindBot],
        sender: SANDBOX_SENDER,
        pollMs: 200,
      });
      runtimes.push(peer);
      await peer.start();
      await armer.receive({ botId: 'remind', user, providerId: 'wamid.w1', source: 'whatsapp', event: { type: 'text', text: 'hi' } });
      await armer.idle();
      await eventually(() => expect(texts(user).length).toBeGreaterThanOrEqual(2), { timeoutMs: 15_000, intervalMs: 50 });
      expect(texts(user)).toEqual(['ok', 'reminder']);
    });

    it('a process whose lease ran out and was taken over drops its live actor: the invocation commits nothing there', async () => {
      const db = await freshDatabase(engine, tmp.dir, 'takeover-5.db');
      const user = '5215500002005';
      let open: () => void = () => {};
      let lookedUp = false;
      const gate = new Promise<void>((r) => {
        open = r;
      });
      const slowBot = defineBot({
        id: 'slow',
        machine: setup({
          types: { events: {} as TextEvent },
          actors: {
            lookup: fromPromise(async () => {
              await gate;
              lookedUp = true;
              return 'found';
            }),
          },
        }).createMachine({
          id: 'slow',
          initial: 'idle',
          states: {
            idle: { on: { text: 'looking' } },
            looking: { entry: say(() => text('looking')), invoke: { src: 'lookup', onDone: { target: 'idle', actions: say(() => text('found')) } } },
          },
        }),
      });
      const adapter = createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET });
      const warnings: string[] = [];
      const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (_o: object, msg?: string) => void warnings.push(msg ?? '') };
      const a = new Runtime({ store: await openStore(db), adapter, bots: [slowBot], sender: SANDBOX_SENDER, work: { leaseMs: 1_000, heartbeatMs: 100 }, pollMs: 200, logger });
      runtimes.push(a);
      await a.start();
      await a.receive({ botId: 'slow', user, providerId: 'wamid.x1', source: 'whatsapp', event: { type: 'text', text: 'go' } });
      await eventually(() => expect(texts(user).length).toBeGreaterThanOrEqual(1), { timeoutMs: 10_000, intervalMs: 50 });
      // As if this process had stalled past its lease: another owner takes the conversation over.
      // (a's heartbeat, every 100 ms, may renew the lease between the two statements: then again)
      const thief = await openStore(db);
      await eventually(
        async () => {
          await execAt(db, 'UPDATE lanes SET lease_until = 0');
          const claims = await thief.claim({ owner: 'thief', leaseMs: 60_000, lapsed: true }, { kind: 'lane', limit: 10, now: Date.now() });
          expect(claims.map((c) => [c.key.user, c.takeover])).toEqual([[user, true]]);
        },
        { what: 'the thief taking the lane' },
      );
      // One of a's heartbeats tells it the lane is gone.
      await eventually(() => expect(warnings).toContain('another process took over this conversation (our lease ran out); it runs there now'), { what: 'a learning that its lane was taken' });
      const version = (await thief.activeConversation({ botId: 'slow', user }))!.version;
      open();
      await eventually(() => lookedUp, { what: 'the invocation to finish' });
      // What a live actor would do with the result (the done event, the lane's sync) is queued in microtasks by now.
      await new Promise((r) => setImmediate(r));
      await a.idle();
      expect(texts(user)).toEqual(['looking']);
      expect((await thief.activeConversation({ botId: 'slow', user }))!.version).toBe(version);
      await thief.close();
    });
  });
});
