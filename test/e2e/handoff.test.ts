/**
 * Handoffs across real `colloquy serve` processes: the support bot walked to its handoff over
 * signed webhooks, agents over HTTP, and the server killed with SIGKILL mid-handoff. Nothing is
 * lost or done twice: the claim and the held messages survive, a retried agent message sends once,
 * and after the release the bot resumes exactly once. The same on SQLite and on PostgreSQL.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { buttonReplyMessage, listReplyMessage, signBody, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { eventually } from '../support/eventually.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { type TempDir, tempDir } from '../support/temp.js';
import { serve } from './cli.js';

const TOKEN = 'agent-token-0123456789';
const SECRET = 'webhook-secret-e2e';
const USER = '5215588880001';
const dirs: TempDir[] = [];
const running: Awaited<ReturnType<typeof serve>>[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) if (s.proc.exitCode === null && s.proc.signalCode === null) await s.stop('SIGKILL');
  for (const d of dirs.splice(0)) d.remove();
});

let n = 0;
async function webhook(url: string, message: Record<string, unknown>): Promise<number> {
  const body = JSON.stringify(webhookPayload({ displayPhoneNumber: '15550000003', messages: [message as never] }));
  const res = await fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(SECRET, body) }, body });
  return res.status;
}
const text = (t: string) => textMessage({ from: USER, id: `wamid.e2e.${++n}`, text: t });
async function agent(url: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/agent/${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: await res.json() };
}

/** Waits up to 30 s (the processes are real) for `probe` to hold; fails with what it last saw. */
const until = <T>(what: string, probe: () => Promise<T>) => eventually(probe, { what, timeoutMs: 30_000, intervalMs: 50 });

type Row = Record<string, unknown>;
/** Where the servers keep their data, and a reader of it from outside (a separate connection per query). */
interface Backend {
  readonly name: string;
  setup(): Promise<{ env: Record<string, string>; q: (sql: string) => Promise<Row[]> }>;
}

const BACKENDS: readonly Backend[] = [
  {
    name: 'SQLite',
    async setup() {
      const dir = tempDir('colloquy-e2e-handoff-');
      dirs.push(dir);
      const db = dir.path('c.db');
      const q = async (sql: string) => {
        const d = new Database(db, { readonly: true });
        try {
          return d.prepare(sql).all() as Row[];
        } finally {
          d.close();
        }
      };
      return { env: { COLLOQUY_DB: db }, q };
    },
  },
  {
    name: 'PostgreSQL',
    async setup() {
      const url = await freshDatabaseUrl();
      const q = async (sql: string) => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          return (await c.query(sql)).rows as Row[];
        } finally {
          await c.end();
        }
      };
      return { env: { COLLOQUY_DATABASE_URL: url }, q };
    },
  },
];

describe.each(BACKENDS)('handoffs across colloquy serve processes on $name', (backend) => {
  it('survives SIGKILL mid-handoff; the bot resumes exactly once after the release', { timeout: 90_000 }, async () => {
    const store = await backend.setup();
    const q = store.q;
    const env = { ...store.env, COLLOQUY_AGENT_TOKEN: TOKEN, COLLOQUY_WEBHOOK_SECRET: SECRET };

    const first = await serve(['bots/support.ts'], env);
    running.push(first);
    expect(await webhook(first.url, text('hi'))).toBe(200);
    expect(await webhook(first.url, listReplyMessage({ from: USER, id: `wamid.e2e.${++n}`, rowId: 'wifi', title: 'Wi-Fi problems' }))).toBe(200);
    expect(await webhook(first.url, buttonReplyMessage({ from: USER, id: `wamid.e2e.${++n}`, buttonId: 'agent', title: 'No, talk to a person' }))).toBe(200);
    expect(await webhook(first.url, text('No signal upstairs.'))).toBe(200);
    const queued = await until('the handoff', async () => {
      const { handoffs } = (await agent(first.url, 'handoffs', undefined)).json;
      expect(handoffs, 'the handoff queue').not.toEqual([]);
      return handoffs[0];
    });
    expect(queued).toMatchObject({ user: USER, queue: 'wifi', status: 'waiting' });
    const id = queued.conversationId as number;
    expect((await agent(first.url, `handoffs/${id}/claim`, { agent: 'ana' })).status).toBe(200);
    expect((await agent(first.url, `handoffs/${id}/claim`, { agent: 'bob' })).status).toBe(409);
    expect((await agent(first.url, `handoffs/${id}/messages`, { agent: 'ana', text: 'Ana here: restart the router please.' }, { 'idempotency-key': 'm-1' })).status).toBe(202);
    expect(await webhook(first.url, text('Done, still nothing.'))).toBe(200);
    await until("the agent's message to be sent", async () => expect(await q(`SELECT 1 FROM outbox WHERE agent = 'ana' AND state = 'sent'`)).toHaveLength(1));
    await first.stop('SIGKILL');

    const second = await serve(['bots/support.ts'], env);
    running.push(second);
    // The same request retried against the new process: not sent again.
    expect(await agent(second.url, `handoffs/${id}/messages`, { agent: 'ana', text: 'Ana here: restart the router please.' }, { 'idempotency-key': 'm-1' })).toMatchObject({
      status: 200,
      json: { duplicate: true },
    });
    expect((await agent(second.url, 'handoffs', undefined)).json.handoffs[0]).toMatchObject({ conversationId: id, status: 'claimed', agent: 'ana' });
    expect(await webhook(second.url, text('Hello?'))).toBe(200);
    expect((await agent(second.url, `handoffs/${id}/release`, { agent: 'ana', note: 'technician booked' })).status).toBe(200);
    await second.stop('SIGKILL'); // right after the release was acknowledged

    const third = await serve(['bots/support.ts'], env);
    running.push(third);
    await until('the bot to resume', async () => expect((await q(`SELECT state FROM conversations WHERE id = ${id}`))[0]?.['state']).toBe('anythingElse'));
    // Its message is queued once. (If the killed process was sending it, it goes out when that send's lease runs out.)
    expect(await q(`SELECT state FROM outbox WHERE message LIKE '%anything else%'`)).toHaveLength(1);
    const out = await q(`SELECT agent, kind, state FROM outbox WHERE conversation_id = ${id} ORDER BY id`);
    expect(out.map((r) => `${r['agent'] ?? 'bot'}:${r['kind']}`)).toEqual(['bot:list', 'bot:buttons', 'bot:text', 'bot:text', 'ana:text', 'bot:buttons']);
    expect(out.slice(0, -1).every((r) => r['state'] === 'sent')).toBe(true);
    const inbox = (await q(`SELECT source, event, state FROM inbox WHERE conversation_id = ${id} ORDER BY id`)).map((r) => `${r['source']}:${JSON.parse(String(r['event'])).type}:${r['state']}`);
    expect(inbox).toEqual([
      'whatsapp:text:done',
      'whatsapp:reply.wifi:done',
      'whatsapp:reply.agent:done',
      'whatsapp:text:done',
      'whatsapp:text:done',
      'whatsapp:text:done',
      'internal:handoff.ended:done',
    ]);
    expect(await q(`SELECT state, agent, ended_by, note FROM handoffs`)).toEqual([{ state: 'ended', agent: 'ana', ended_by: 'ana', note: 'technician booked' }]);
  });
});
