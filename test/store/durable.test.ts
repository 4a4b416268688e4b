/**
 * Durable against a dead machine: the SQLite store's write connection runs `synchronous = FULL`,
 * so the WAL is fsynced inside every COMMIT, before any write's promise settles (the webhook's
 * 200 waits for that promise: test/webhook/durable.test.ts).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { openStore } from '../../src/store/open.js';
import { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/store.js';
import { inbound, tempDir } from './helpers.js';

const open: SqliteStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

function store(o: Partial<SqliteStoreOptions> = {}): SqliteStore {
  const s = openSqliteStore({ path: join(tempDir(), 'durable.db'), ...o });
  open.push(s);
  return s;
}

/** SQLite's numbers for the setting: 1 NORMAL, 2 FULL. */
const synchronous = (s: SqliteStore) => s.db.pragma('synchronous', { simple: true });

describe('the SQLite store’s durability', () => {
  it('commits with synchronous = FULL in WAL mode on the connection that writes, and after writes', async () => {
    const s = store();
    expect(s.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(synchronous(s)).toBe(2);
    await s.addInbound(inbound());
    expect(synchronous(s)).toBe(2);
  });

  it('trades durability for speed only when asked: synchronous = NORMAL', () => {
    expect(synchronous(store({ synchronous: 'normal' }))).toBe(1);
    expect(synchronous(store({ synchronous: 'full' }))).toBe(2);
  });

  it('refuses a setting it does not know, naming the option', () => {
    const bad = { synchronous: 'off' } as unknown as Partial<SqliteStoreOptions>;
    expect(() => store(bad)).toThrow(ConfigError);
    expect(() => store(bad)).toThrow('synchronous: must be "full" or "normal", got "off"');
  });
});

describe('COLLOQUY_SQLITE_SYNCHRONOUS', () => {
  it('is full unless set to normal, and reaches the store opened from the configuration', async () => {
    expect(loadConfig({}).sqliteSynchronous).toBe('full');
    for (const [value, pragma] of [
      [undefined, 2],
      ['full', 2],
      ['normal', 1],
    ] as const) {
      const config = loadConfig({ COLLOQUY_DB: join(tempDir(), 'env.db'), ...(value !== undefined && { COLLOQUY_SQLITE_SYNCHRONOUS: value }) });
      const s = (await openStore({ url: config.db, synchronous: config.sqliteSynchronous })) as SqliteStore;
      open.push(s);
      expect(synchronous(s)).toBe(pragma);
    }
  });

  it('stops the start on any other value, naming the variable', () => {
    expect(() => loadConfig({ COLLOQUY_SQLITE_SYNCHRONOUS: 'off' })).toThrow('COLLOQUY_SQLITE_SYNCHRONOUS: must be one of full, normal, got "off"');
  });
});
