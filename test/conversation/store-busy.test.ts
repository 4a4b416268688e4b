/**
 * A database locked by another connection (SQLITE_BUSY) is never the bot's failure: turns,
 * invocation results, due timers and sends wait it out with backoff and go through once it is
 * free, without waiting for an unrelated event.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { defineBot, say, text } from '../../src/index.js';
import { Runtime } from '../../src/entries/server.js';
import { openSqliteStore } from '../../src/entries/sqlite.js';
import { ManualClock } from '../../src/conversation/clock.js';
import { SANDBOX_SENDER, type RunningSandbox } from '../../src/sandbox/index.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import counterBot from '../fixtures/counter-bot.js';
import { USER, adapterFor, manualLookup, queueSms, sandbox, world, type World } from './helpers.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';
import { StoreUnavailableError } from '../../src/errors.js';

/** The store gives up at once on a locked database, so the runtime's own retries are what is tested. */
const impatient = { busyTimeoutMs: 1, busyRetryMs: 0 };

const tmp = tempDir();
let w: World | undefined;
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  await w?.close();
  w = undefined;
  for (const c of cleanup.splice(0)) await c();
});

/** Another connection holding the write lock, as another process would. */
function lock(path: string): { release: () => void } {
  const other = new Database(path);
  other.exec('BEGIN IMMEDIATE');
  return {
    release: () => {
      other.exec('COMMIT');
      other.close();
    },
  };
}

/** The counter bot's runtime on `store`, started (and stopped after the test). */
async function startCounter(store: SqliteStore, clock: ManualClock): Promise<{ sb: RunningSandbox; runtime: Runtime }> {
  const sb = await sandbox();
  const adapter = adapterFor(sb);
  const runtime = new Runtime({ store, adapter, bots: [counterBot], sender: SANDBOX_SENDER, clock });
  cleanup.push(async () => {
    await runtime.stop();
    await adapter.close();
    await store.close();
    await sb.close();
  });
  await runtime.start();
  return { sb, runtime };
}

/**
 * Records the store calls that failed with StoreUnavailableError: the positive sign that the
 * runtime met the lock, after which what it must not have done can be checked.
 */
function unavailableCalls(store: SqliteStore): string[] {
  const failed: string[] = [];
  const names = new Set<string>();
  for (let o: object | null = store; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) for (const n of Object.getOwnPropertyNames(o)) names.add(n);
  const target = store as unknown as Record<string, unknown>;
  for (const name of names) {
    const method = target[name];
    if (name === 'constructor' || typeof method !== 'function') continue;
    target[name] = (...args: unknown[]) => {
      const r = (method as (...a: unknown[]) => unknown).apply(store, args);
      if (r instanceof Promise)
        return r.catch((err: unknown) => {
          if (err instanceof StoreUnavailableError) failed.push(name);
          throw err;
        });
      return r;
    };
  }
  return failed;
}

/** Waits until the runtime's call of `method` has met the locked database and given up. */
async function metTheLock(failed: readonly string[], method: string): Promise<void> {
  await eventually(() => expect(failed).toContain(method), { what: `a ${method} that met the lock` });
}
let n = 0;
const dbPath = () => join(tmp.dir, `busy-${++n}.db`);
const textsTo = (sb: RunningSandbox, user: string) => sb.sandbox.messagesTo(user).map((m) => (m.channel === 'sms' ? m.text : (m.request as { text?: { body?: string } }).text?.body));

describe('a locked database', () => {
  it('an invocation result that meets a locked database is committed once it is free; the conversation lives on', async () => {
    const { lookup, finish } = manualLookup();
    const machine = setup({ actors: { lookup } }).createMachine({
      id: 'slow',
      initial: 'idle',
      states: {
        idle: { on: { text: 'looking' } },
        looking: { entry: say(text('looking')), invoke: { src: 'lookup', onDone: 'found' } },
        found: { entry: say(text('found it')) },
      },
    });
    const path = dbPath();
    w = await world([defineBot({ id: 'slow', machine, options: { onUnhandled: 'ignore' } })], { path, store: impatient });
    await w.send({ type: 'text', text: 'hi', via: 'whatsapp' }, USER, 'slow');
    const held = lock(path);
    const failed = unavailableCalls(w.store);
    finish('ok');
    await metTheLock(failed, 'commitTurn');
    const during = await w.store.activeConversation({ botId: 'slow', user: USER });
    expect(during?.status).toBe('active');
    held.release();
    w.clock.advance(10_000);
    await eventually(() => expect(textsTo(w!.sb, USER)).toEqual(['looking', 'found it']));
    await w.runtime.idle();
    const conv = (await w.store.conversations({ botId: 'slow', user: USER }))[0]!;
    expect(conv).toMatchObject({ status: 'active', state: 'found' });
    expect(textsTo(w.sb, USER)).toEqual(['looking', 'found it']);
  });

  it('a timer falling due while the database is locked fires once it is free, with no other event', async () => {
    const machine = setup({}).createMachine({
      id: 'remind',
      initial: 'idle',
      states: {
        idle: { on: { text: 'ask' } },
        ask: { entry: say(text('question')), after: { 1000: 'reminded' } },
        reminded: { entry: say(text('reminder')) },
      },
    });
    const path = dbPath();
    w = await world([defineBot({ id: 'remind', machine, options: { onUnhandled: 'ignore' } })], { path, store: impatient });
    await w.send({ type: 'text', text: 'hi', via: 'whatsapp' }, USER, 'remind');
    const held = lock(path);
    const failed = unavailableCalls(w.store);
    w.clock.advance(1_000);
    await metTheLock(failed, 'claim');
    await w.runtime.idle();
    expect(await w.store.timers((await w.store.activeConversation({ botId: 'remind', user: USER }))!.id)).toHaveLength(1);
    held.release();
    w.clock.advance(10_000);
    await eventually(() => expect(textsTo(w!.sb, USER)).toEqual(['question', 'reminder']));
    await w.runtime.idle();
    expect(textsTo(w.sb, USER)).toEqual(['question', 'reminder']);
  });

  it('an inbound whose turn meets a locked database is run once it is free, not failed', async () => {
    const path = dbPath();
    const store = openSqliteStore({ path, ...impatient });
    await store.addInbound({ providerId: 'wamid.busy1', botId: 'counter', user: USER, source: 'whatsapp', event: { type: 'text', text: 'hi' }, receivedAt: 1 });
    const held = lock(path);
    const failed = unavailableCalls(store);
    const clock = new ManualClock();
    const { sb, runtime } = await startCounter(store, clock);
    await metTheLock(failed, 'claim');
    expect((await store.inbound(1))?.state).toBe('pending');
    held.release();
    clock.advance(10_000);
    await eventually(() => expect(textsTo(sb, USER)).toEqual(['#1']));
    await runtime.idle();
    expect(await store.inbound(1)).toMatchObject({ state: 'done', error: null });
    expect(textsTo(sb, USER)).toEqual(['#1']);
  });

  it('a claim that meets a locked database is tried again, with no other event', async () => {
    const path = dbPath();
    const store = openSqliteStore({ path, ...impatient });
    const clock = new ManualClock();
    const key = { botId: 'counter', user: USER };
    await queueSms(store, key, 'queued', 'ft_busy', clock.now());
    const held = lock(path);
    const failed = unavailableCalls(store);
    const { sb, runtime } = await startCounter(store, clock);
    await metTheLock(failed, 'claim');
    expect(textsTo(sb, USER)).toEqual([]);
    held.release();
    clock.advance(10_000);
    await eventually(() => expect(textsTo(sb, USER)).toEqual(['queued']));
    await runtime.idle();
    expect(textsTo(sb, USER)).toEqual(['queued']);
  });
});

describe('the worker wakes for the earliest due row', () => {
  it('a row that falls due while a claim runs is claimed without another event', async () => {
    /** Time passes while the store claims (a slow disk), without any timer running meanwhile. */
    class SlowClaims extends ManualClock {
      drift = 0;
      override now(): number {
        return super.now() + this.drift;
      }
    }
    const clock = new SlowClaims();
    const path = dbPath();
    const store = openSqliteStore({ path });
    const key = { botId: 'counter', user: USER };
    await queueSms(store, key, 'due soon', 'ft_due', clock.now() + 3);
    const claim = store.claim.bind(store);
    store.claim = (async (who, request) => {
      const items = await claim(who, request);
      if (request.kind === 'send') clock.drift += 5;
      return items;
    }) as typeof store.claim;
    const { sb, runtime } = await startCounter(store, clock);
    await eventually(() => expect(clock.drift).toBeGreaterThan(0), { what: 'a first claim' });
    clock.advance(60_000);
    await eventually(() => expect(textsTo(sb, USER)).toEqual(['due soon']));
    await runtime.idle();
    expect(textsTo(sb, USER)).toEqual(['due soon']);
  });
});
