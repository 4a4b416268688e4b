/**
 * A provider that echoes every secret (the client secret, every access token, the Authorization
 * header) in every field of every answer, accepted or refused, interactive or SMS: nothing the
 * stores keep holds any of them, on SQLite and on PostgreSQL.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { ManualClock } from '../../src/conversation/clock.js';
import { createHttpAdapter, Runtime } from '../../src/entries/server.js';
import { defineBot, say, sms, text, type TextEvent } from '../../src/index.js';
import type { PgStore } from '../../src/store/postgres/store.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { DIALECTS } from '../store/helpers.js';

const CLIENT_SECRET = 'client-secret-5f2a9c71e0';
const USER = '5215512345678';

/** The echoing provider on loopback; `secrets` is everything it ever saw or issued. */
async function echoingProvider(): Promise<{ url: string; secrets: Set<string>; close(): Promise<void> }> {
  const secrets = new Set<string>([CLIENT_SECRET]);
  let issued = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const auth = String(req.headers['authorization'] ?? '');
      if (auth !== '') secrets.add(auth);
      const token = auth.replace(/^Bearer /, '');
      const all = `${auth} | ${token} | ${CLIENT_SECRET} | ${body}`;
      const answer = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.url === '/token') {
        const fresh = `tok-${++issued}-a81d4c2e9b`;
        secrets.add(fresh);
        return answer(200, { access_token: fresh, token_type: 'Bearer', expires_in: 600, echo: all });
      }
      const request = JSON.parse(body) as { text?: { body?: string }; message?: string };
      if (req.url?.endsWith('/services/messaging')) {
        return answer(200, { code: 0, mailingId: token, result: `Applied for ${all}`, hint: all, message: all, [token]: all });
      }
      if (request.text?.body === 'refuse me') {
        return answer(400, { error: { code: token, message: `refused ${all}`, error_data: { details: all } }, [token]: all });
      }
      answer(200, { id: token, messageId: all, messages: [{ id: token }], echo: { all, [token]: CLIENT_SECRET } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, secrets, close: () => new Promise((r) => server.close(() => r())) };
}

const bot = defineBot({
  id: 'echo',
  machine: setup({ types: { events: {} as TextEvent } }).createMachine({
    id: 'echo',
    initial: 'on',
    states: { on: { on: { text: { actions: [say(({ event }) => text(event.text)), say(() => sms('by SMS too'))] } } } },
  }),
  options: { onUnhandled: 'ignore' },
});

/** Every row of every table, as text. */
async function dump(store: Store): Promise<string> {
  if ('db' in store && typeof (store as SqliteStore).db.prepare === 'function') {
    const db = (store as SqliteStore).db;
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name);
    return JSON.stringify(tables.map((t) => db.prepare(`SELECT * FROM "${t}"`).all()));
  }
  const db = (store as PgStore).db;
  const tables = (await db.query<{ table_name: string }>('SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()')).rows.map((r) => r.table_name);
  const out: unknown[] = [];
  for (const t of tables) out.push((await db.query(`SELECT * FROM "${t}"`)).rows);
  return JSON.stringify(out);
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe.each(DIALECTS)('a provider echoing every secret, on $name', (dialect) => {
  it('leaves no secret in any stored column: interactive and SMS answers, a refusal and its SMS fallback', async () => {
    const provider = await echoingProvider();
    cleanup.push(() => provider.close());
    const store = await dialect.open();
    const adapter = createHttpAdapter({ baseUrl: provider.url, authUrl: provider.url, clientId: 'client-1', clientSecret: CLIENT_SECRET, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    const runtime = new Runtime({ store, adapter, bots: [bot], sender: '5215500000000', clock: new ManualClock(), sends: { baseDelayMs: 1, maxAttempts: 1 } });
    cleanup.push(async () => {
      await runtime.stop();
      await adapter.close();
    });
    await runtime.start();
    for (const words of ['hello', 'refuse me']) {
      await runtime.receive({ botId: 'echo', user: USER, source: 'whatsapp', event: { type: 'text', text: words } });
      await runtime.idle();
    }
    const stored = await dump(store);
    expect(stored).toContain('[redacted]'); // the answers were kept, cleaned
    expect(stored).toContain('Applied for');
    expect(provider.secrets.size).toBeGreaterThan(2);
    for (const secret of provider.secrets) expect(stored, `a stored column holds ${secret}`).not.toContain(secret);
  });
});
