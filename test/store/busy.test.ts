/**
 * A database locked by another connection: the store keeps the event loop free (short waits,
 * retried asynchronously), reports it in health(), and past its budget throws StoreUnavailableError.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/errors.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { NewInbound } from '../../src/store/types.js';
import { tempDir } from '../support/temp.js';

const { dir, remove } = tempDir('colloquy-busy-');
afterAll(remove);
let n = 0;
const path = () => join(dir, `busy-${++n}.db`);

function lock(file: string): { release: () => void } {
  const other = new Database(file);
  other.exec('BEGIN IMMEDIATE');
  return {
    release: () => {
      other.exec('COMMIT');
      other.close();
    },
  };
}

const inbound = (id: string): NewInbound => ({ providerId: id, botId: 'b', user: '5215512345678', source: 'whatsapp', event: { type: 'text', text: 'hi' }, receivedAt: 1 });

describe('a locked database', () => {
  it('a write waits asynchronously (the event loop keeps running) and goes through once the lock is released', async () => {
    const file = path();
    const store = openSqliteStore({ path: file, busyRetryMs: 10_000 });
    const held = lock(file);
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks++;
    }, 5);
    const releaseAt = new Promise<void>((resolve) =>
      setTimeout(() => {
        held.release();
        resolve();
      }, 150),
    );
    const result = await store.addInbound(inbound('wamid.wait'));
    clearInterval(ticker);
    await releaseAt;
    expect(result.duplicate).toBe(false);
    expect(ticks).toBeGreaterThan(0); // timers ran while the write waited (the release itself is one)
    expect((await store.inbound(result.id))?.providerId).toBe('wamid.wait');
    expect(await store.health()).toEqual({ ok: true });
    await store.close();
  });

  it('past its budget, a write fails with StoreUnavailableError naming the reason, and stores nothing', async () => {
    const file = path();
    const store = openSqliteStore({ path: file, busyRetryMs: 50 });
    const held = lock(file);
    const err = await store.addInbound(inbound('wamid.never')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect(err).toMatchObject({ code: 'store_unavailable', reason: 'SQLITE_BUSY' });
    const health = await store.health();
    expect(health).toMatchObject({ ok: false, busy: true });
    expect(health.reason).toMatch(/locked/);
    held.release();
    expect(await store.inbound(1)).toBeUndefined(); // nothing was stored
    expect(await store.health()).toEqual({ ok: true });
    await store.close();
  });

  it('health() notices a lock held by another connection without waiting for it', async () => {
    const file = path();
    const store = openSqliteStore({ path: file });
    const held = lock(file);
    const health = await store.health();
    held.release();
    expect(health).toMatchObject({ ok: false, busy: true });
    expect(await store.health()).toEqual({ ok: true });
    await store.close();
  });
});
