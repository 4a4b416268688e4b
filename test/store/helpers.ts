/** Shared store test helpers: real SQLite stores and temp folders, closed and removed after each test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite.js';
import type { ConversationKey, NewInbound, NewOutbound, TimerChanges, TurnCommit } from '../../src/store/types.js';

const stores: SqliteStore[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh folder under the system temp folder, removed after the test. */
export function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'colloquy-store-'));
  dirs.push(d);
  return d;
}

/** A migrated store on `:memory:` or a file, closed after the test. */
export function open(path = ':memory:'): SqliteStore {
  const s = openSqliteStore(path);
  stores.push(s);
  return s;
}

export const T0 = 1_700_000_000_000;
export const ALICE: ConversationKey = { botId: 'pizza', user: '+4915100000001' };
export const BOB: ConversationKey = { botId: 'pizza', user: '+4915100000002' };

let seq = 0;

/** An inbound from a user, with a unique provider id unless given. */
export function inbound(over: Partial<NewInbound> = {}): NewInbound {
  seq++;
  return { ...ALICE, providerId: `wamid.${seq}`, source: 'whatsapp', event: { type: 'text', text: `hello ${seq}` }, raw: { n: seq }, receivedAt: T0, ...over };
}

/** An outbound text message. */
export function text(body: string, over: Partial<NewOutbound> = {}): NewOutbound {
  return { kind: 'text', message: { type: 'text', text: body }, channel: 'interactive', request: { text: { body } }, ...over };
}

export const NO_TIMERS: TimerChanges = { upsert: [], remove: [], activeStateNodes: [] };

/** A turn that creates a conversation (unique flow token) unless `conversationId` is given. */
export function turn(over: Partial<TurnCommit> = {}): TurnCommit {
  seq++;
  return {
    key: ALICE, conversationId: undefined, expectedVersion: 0, snapshot: { value: 'menu', n: seq }, state: 'menu', status: 'active',
    flowToken: `ft_${seq}`, userActivity: true, outbox: [], timers: NO_TIMERS, now: T0, ...over,
  };
}

/** Raw rows of a table, for checks the port does not expose. */
export function rows(store: SqliteStore, table: string): Record<string, unknown>[] {
  return store.db.prepare(`SELECT * FROM ${table} ORDER BY rowid`).all() as Record<string, unknown>[];
}
