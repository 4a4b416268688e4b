/**
 * Shared store test helpers: the dialects the conformance suite runs against (real SQLite files or
 * `:memory:`, a real PostgreSQL database per store), temp folders, and builders of inbounds,
 * outbounds and turns. Everything opened here is closed after each test.
 */
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { PgStore } from '../../src/store/postgres/store.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import type { Claimant, ConversationKey, InboxRecord, LaneClaim, NewInbound, NewOutbound, OutboxRecord, SendRecord, Store, TimerChanges, TurnCommit } from '../../src/store/types.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { type TempDir, tempDir as makeTempDir } from '../support/temp.js';

const stores: Store[] = [];
const dirs: TempDir[] = [];

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) d.remove();
});

/** A fresh folder under the system temp folder, removed after the test. */
export function tempDir(): string {
  const d = makeTempDir('colloquy-store-');
  dirs.push(d);
  return d.dir;
}

/** One database engine the conformance suite runs against. */
export interface StoreDialect {
  readonly name: 'sqlite' | 'postgres';
  /** A new, empty database that several stores can open (a SQLite file, a PostgreSQL database). */
  fresh(): Promise<string>;
  /** A migrated store on `location` (default: a new empty database), closed after the test. */
  open(location?: string): Promise<Store>;
  /** Makes inbox inserts whose event contains `word` fail (a fault inside a transaction); returns the undo. */
  failInboxInserts(store: Store, word: string): Promise<() => Promise<void>>;
}

async function track(store: Promise<Store>): Promise<Store> {
  const s = await store;
  stores.push(s);
  return s;
}

/** SQLite: `:memory:` for one store, a temp file for several. */
export const sqlite: StoreDialect = {
  name: 'sqlite',
  fresh: async () => join(tempDir(), 'colloquy.db'),
  open: (location = ':memory:') => track(openStore(location)),
  async failInboxInserts(store, word) {
    const db = (store as SqliteStore).db;
    db.exec(`CREATE TRIGGER fail_inbox BEFORE INSERT ON inbox WHEN NEW.event LIKE '%${word}%' BEGIN SELECT RAISE(ABORT, '${word}'); END`);
    return async () => {
      db.exec('DROP TRIGGER fail_inbox');
    };
  },
};

/** PostgreSQL: a new database (copied from the migrated template) per store unless a location is given. */
export const postgres: StoreDialect = {
  name: 'postgres',
  fresh: () => freshDatabaseUrl(),
  open: async (location) => track(openStore(location ?? (await freshDatabaseUrl()))),
  async failInboxInserts(store, word) {
    const db = (store as PgStore).db;
    await db.query(`CREATE FUNCTION fail_inbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.event LIKE '%${word}%' THEN RAISE EXCEPTION '${word}'; END IF; RETURN NEW; END $$`);
    await db.query('CREATE TRIGGER fail_inbox BEFORE INSERT ON inbox FOR EACH ROW EXECUTE FUNCTION fail_inbox()');
    return async () => {
      await db.query('DROP TRIGGER fail_inbox ON inbox');
      await db.query('DROP FUNCTION fail_inbox()');
    };
  },
};

/** Every dialect, for `describe.each(DIALECTS)`. */
export const DIALECTS: readonly StoreDialect[] = [sqlite, postgres];

/** A migrated SQLite store (for SQLite-only checks: pragmas, the file), closed after the test. */
export function openSqlite(path = ':memory:'): SqliteStore {
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
    key: ALICE,
    conversationId: undefined,
    expectedVersion: 0,
    snapshot: { value: 'menu', n: seq },
    state: 'menu',
    status: 'active',
    flowToken: `ft_${seq}`,
    userActivity: true,
    outbox: [],
    timers: NO_TIMERS,
    now: T0,
    ...over,
  };
}

/** The records of ids 1..n that a getter finds (ids start at 1 in a fresh database). */
async function byIds<T>(get: (id: number) => Promise<T | undefined>, n = 40): Promise<T[]> {
  const found = await Promise.all(Array.from({ length: n }, (_, i) => get(i + 1)));
  return found.filter((x): x is Awaited<T> => x !== undefined) as T[];
}

/** Every inbound of a small test database, read through the port. */
export const allInbound = (store: Store, upTo = 40) => byIds((id) => store.inbound(id), upTo);
/** Every outbox row of a small test database, read through the port. */
export const allOutbound = (store: Store, upTo = 40) => byIds((id) => store.outbound(id), upTo);

/** Everything a store holds that a commit could touch, read through the port, to compare before and after. */
export async function everything(store: Store): Promise<Record<string, unknown>> {
  const conversations = await store.conversations();
  const timers = await Promise.all(conversations.map(async (c) => [c.id, await store.timers(c.id)]));
  return { conversations, timers, inbox: await allInbound(store), outbox: await allOutbound(store), next: await store.nextDue() };
}

/** The conversation's oldest pending inbound (what its lane runs next), read through the port. */
export async function nextPending(store: Store, key: ConversationKey, upTo = 40): Promise<InboxRecord | undefined> {
  return (await allInbound(store, upTo)).find((i) => i.state === 'pending' && i.botId === key.botId && i.user === key.user);
}

/** The claimant the tests claim work as, unless they race several: a long lease, lapsed claims taken. */
export const WORKER: Claimant = { owner: 'test-worker', leaseMs: 60_000, lapsed: true };

/** Claims up to `limit` due sends at `now`. */
export function claimSends(store: Store, now = T0, limit = 100, who: Claimant = WORKER): Promise<OutboxRecord[]> {
  return store.claim(who, { kind: 'send', limit, now });
}

/** Claims lanes with work (or the lane of `key`) for `owner`. */
export function claimLanes(
  store: Store,
  owner: string,
  o: { readonly leaseMs?: number; readonly key?: ConversationKey; readonly limit?: number; readonly lapsed?: boolean } = {},
): Promise<LaneClaim[]> {
  return store.claim({ owner, leaseMs: o.leaseMs ?? 60_000, lapsed: o.lapsed ?? true }, { kind: 'lane', limit: o.limit ?? 100, now: T0, key: o.key });
}

/** Records a claimed send as sent (it must hold its claim). */
export async function sent(store: Store, row: OutboxRecord, record: SendRecord = { state: 'sent' }, now = T0): Promise<void> {
  if (!(await store.settleSend(row.id, row.claim!, { kind: 'sent', record }, now))) throw new Error(`outbox row ${row.id} lost its claim`);
}

/** Claims and sends every due send at `now`, each conversation's rows in order, as the worker would; the rows sent. */
export async function sendAll(store: Store, now = T0): Promise<OutboxRecord[]> {
  const out: OutboxRecord[] = [];
  for (let batch = await claimSends(store, now); batch.length > 0; batch = await claimSends(store, now)) {
    for (const o of batch) await sent(store, o, { state: 'sent', providerId: `wamid.out${o.id}` }, now);
    out.push(...batch);
  }
  return out;
}
