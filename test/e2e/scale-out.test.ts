/**
 * Several `colloquy serve` processes on one database, one killed with SIGKILL right after it
 * acknowledged a burst whose sends are slow: nothing is lost, each user's replies come in order and
 * equal a single-process run, a send is repeated only if it was in flight at the kill (at most
 * once), and the dead process's conversations and sends are taken over within 15 s, with no
 * restart. Also one process restarted at once on the same database.
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';
import { collapse, pool, post, referenceRun, startNode, startProviderProcess, type Node, type ProviderProcess } from '../support/cluster.js';
import { freshDatabaseUrl } from '../support/postgres.js';

type Row = Record<string, unknown>;

/** The database the servers share, and a way to look into it from the test. */
interface SharedDb {
  readonly env: Record<string, string>;
  rows(sql: string, params?: unknown[]): Promise<Row[]>;
}

const tmp = tempDir();
afterAll(() => tmp.remove());

const started: (Node | ProviderProcess)[] = [];
const clients: pg.Client[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((p) => ('owner' in p ? p.kill() : p.stop())));
  await Promise.all(clients.splice(0).map((c) => c.end()));
});

function sqliteDb(name: string): SharedDb {
  const file = join(tmp.dir, name);
  return {
    env: { COLLOQUY_DB: file },
    rows: async (sql, params = []) => {
      const d = new Database(file, { readonly: true, fileMustExist: true });
      try {
        return d.prepare(sql).all(...params) as Row[];
      } finally {
        d.close();
      }
    },
  };
}

/** A throwaway PostgreSQL database (from the test server) that the servers share. */
async function postgresDb(): Promise<SharedDb> {
  const url = await freshDatabaseUrl();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return {
    env: { COLLOQUY_DATABASE_URL: url },
    rows: async (sql, params = []) => {
      let n = 0;
      return (
        await client.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        )
      ).rows as Row[];
    },
  };
}

const USERS = 120;
const ROUNDS = ['r1', 'r2', 'r3', 'r4'];
/** Slow sends: the provider holds each SMS this long, so many are in flight at the kill. */
const SEND_LATENCY_MS = 800;
const users = Array.from({ length: USERS }, (_, i) => `52155${String(3_000_000 + i).padStart(8, '0')}`);
const script = new Map(users.map((u) => [u, ROUNDS]));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const id = (user: string, round: string) => `wamid.${user}.${round}`;

/** Posts one round: each user's message to a node chosen by `route`; every post must be acknowledged. */
async function round(r: string, route: (user: string) => Node): Promise<void> {
  await pool(users, 24, async (u) => {
    const status = await post(route(u), u, id(u, r), r);
    if (status !== 200) throw new Error(`webhook answered ${status} to ${id(u, r)}`);
  });
}

/** What the dead process left at the kill: the lanes it held with work, and every send in flight. */
async function leftAtKill(db: SharedDb, owner: string): Promise<{ lanes: Row[]; inflight: Row[] }> {
  const lanes = await db.rows('SELECT bot_id, user_number FROM lanes WHERE owner = ? AND work_seq > done_seq', [owner]);
  const inflight = await db.rows(`SELECT id, user_number, message, attempts FROM outbox WHERE state = 'sending'`);
  return { lanes, inflight };
}

/** Waits until nothing the dead process held is still held by it; returns how long that took. */
async function takeover(db: SharedDb, owner: string, inflight: readonly Row[], killedAt: number): Promise<number> {
  const ids = inflight.map((r) => Number(r['id']));
  await eventually(
    async () => {
      const held = await db.rows('SELECT COUNT(*) AS n FROM lanes WHERE owner = ? AND work_seq > done_seq', [owner]);
      if (Number(held[0]!['n']) > 0) return false;
      if (!ids.length) return true;
      const rows = await db.rows(`SELECT id, state, attempts FROM outbox WHERE id IN (${ids.join(',')})`);
      const before = new Map(inflight.map((r) => [Number(r['id']), Number(r['attempts'])]));
      return rows.every((r) => r['state'] !== 'sending' || Number(r['attempts']) > before.get(Number(r['id']))!);
    },
    { timeoutMs: 30_000, intervalMs: 100, what: "the dead process's lanes and sends were taken over" },
  );
  return Date.now() - killedAt;
}

/** Every user's replies equal the reference, repeats only of sends in flight at the kill, at most one each. */
async function checkReplies(provider: ProviderProcess, db: SharedDb, inflight: readonly Row[]): Promise<number> {
  const reference = await referenceRun(script);
  const inflightTexts = new Set(inflight.map((r) => `${String(r['user_number'])} ${(JSON.parse(String(r['message'])) as { text: string }).text}`));
  const complete = await eventually(
    async () => {
      const all = await provider.all();
      return users.every((u) => collapse(all.filter((m) => m.to === u).map((m) => m.text)).texts.length >= ROUNDS.length);
    },
    { timeoutMs: 40_000, intervalMs: 250 },
  ).then(
    () => true,
    () => false, // the per-user comparison below says what is missing
  );
  const all = await provider.all();
  let repeats = 0;
  for (const u of users) {
    const got = collapse(all.filter((m) => m.to === u).map((m) => m.text));
    expect(got.texts, `replies to ${u}`).toEqual(reference.get(u));
    for (const t of got.repeats) expect(inflightTexts.has(`${u} ${t}`), `"${t}" to ${u} was sent twice but was not in flight at the kill`).toBe(true);
    expect(new Set(got.repeats).size, `a send to ${u} repeated more than once`).toBe(got.repeats.length);
    repeats += got.repeats.length;
  }
  expect(complete).toBe(true);
  const inbox = (await db.rows(`SELECT state, COUNT(*) AS n FROM inbox GROUP BY state`)).map((r) => ({ state: r['state'], n: Number(r['n']) }));
  expect(inbox).toEqual([{ state: 'done', n: USERS * ROUNDS.length }]);
  return repeats;
}

describe.each([
  { name: 'sqlite', db: async () => sqliteDb(`cluster-${Date.now()}.db`) },
  { name: 'postgres', db: postgresDb },
])('several serve processes on one database ($name)', ({ name, db: makeDb }) => {
  it('three processes, random routing, redeliveries elsewhere, one killed -9 after acknowledging a burst', async () => {
    const db = await makeDb();
    const provider = await startProviderProcess();
    started.push(provider);
    await provider.latency(SEND_LATENCY_MS);
    const first = await startNode(provider, db.env);
    started.push(first);
    const others = await Promise.all([startNode(provider, db.env), startNode(provider, db.env)]);
    started.push(...others);
    const nodes = [first, ...others];

    await round('r1', () => pick(nodes));
    await round('r2', () => pick(nodes));
    // Redeliveries of acknowledged messages, each to a process other than the one that took it.
    await pool(users.slice(0, 40), 16, async (u) => {
      expect(await post(pick(nodes), u, id(u, 'r1'), 'r1')).toBe(200);
    });

    const victim = nodes[0]!;
    const survivors = nodes.slice(1);
    await round('r3', () => victim); // a burst the victim acknowledges, then dies before (all of) its work is done
    await victim.kill();
    const killedAt = Date.now();
    const left = await leftAtKill(db, victim.owner);

    // The provider delivers again what the dead process acknowledged, to the survivors; the users go on.
    await pool(users, 24, async (u) => {
      expect(await post(pick(survivors), u, id(u, 'r3'), 'r3')).toBe(200);
    });
    await round('r4', () => pick(survivors));

    const took = await takeover(db, victim.owner, left.inflight, killedAt);
    const repeats = await checkReplies(provider, db, left.inflight);
    expect(took).toBeLessThanOrEqual(15_000);
    console.log(`[scale-out ${name}] killed holding ${left.lanes.length} lanes with work and ${left.inflight.length} sends in flight; taken over after ${took} ms; ${repeats} sends repeated`);
  }, 120_000);

  it('one process killed -9 and restarted at once on the same database resumes within 15 s', async () => {
    const db = await makeDb();
    const provider = await startProviderProcess();
    started.push(provider);
    await provider.latency(SEND_LATENCY_MS);
    const victim = await startNode(provider, db.env);
    started.push(victim);
    await round('r1', () => victim);
    await round('r2', () => victim);
    await round('r3', () => victim);
    // This time the kill comes once replies are on their way: sends in flight as well as invocations running.
    await eventually(async () => expect(Number((await db.rows(`SELECT COUNT(*) AS n FROM outbox WHERE state = 'sending'`))[0]!['n'])).toBeGreaterThanOrEqual(20), { timeoutMs: 20_000 });
    await victim.kill();
    const killedAt = Date.now();
    const left = await leftAtKill(db, victim.owner);
    const next = await startNode(provider, db.env);
    started.push(next);
    await pool(users, 24, async (u) => {
      expect(await post(next, u, id(u, 'r3'), 'r3')).toBe(200);
    });
    await round('r4', () => next);

    const took = await takeover(db, victim.owner, left.inflight, killedAt);
    const repeats = await checkReplies(provider, db, left.inflight);
    expect(took).toBeLessThanOrEqual(15_000);
    console.log(`[scale-out ${name}, restart] killed holding ${left.lanes.length} lanes with work and ${left.inflight.length} sends in flight; resumed after ${took} ms; ${repeats} sends repeated`);
  }, 120_000);
});
