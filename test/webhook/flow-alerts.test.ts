/**
 * The `flows` webhook field: WhatsApp's alerts about the Flow endpoint and flow status changes
 * become one log line and one count each, over real HTTP, with a real SQLite store (`:memory:`).
 */
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ManualClock, Runtime } from '../../src/conversation/index.js';
import type { Logger } from '../../src/log.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, SIGNATURE_HEADER, signBody, startSandbox, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { openPgStore, PgStore } from '../../src/store/postgres/store.js';
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.js';
import { createHttpAdapter } from '../../src/transport/index.js';
import { createWebhookRouter } from '../../src/webhook/index.js';
import orderBot from '../fixtures/order-bot.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { SECRET, USER, afterThisTest, closeServer, listen } from './helpers.js';

interface Line {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly obj: Record<string, unknown>;
  readonly msg: string;
}

interface Setup {
  readonly lines: Line[];
  readonly runtime: Runtime;
  post(body: unknown, o?: { signature?: string | null }): Promise<{ status: number; json: Record<string, unknown> }>;
  count(table: 'inbox' | 'outbox' | 'conversations'): Promise<number>;
  /** The log lines about flows (the ones the alerts wrote). */
  alerts(): Line[];
  counted(event: string): number;
}

/** The webhook router on port 0 in front of a runtime on `store` (SQLite `:memory:` unless given). */
async function setup(store: SqliteStore | PgStore = openSqliteStore(':memory:')): Promise<Setup> {
  const lines: Line[] = [];
  const keep = (level: Line['level']) => (obj: object, msg?: string) => void lines.push({ level, obj: obj as Record<string, unknown>, msg: msg ?? '' });
  const logger: Logger = { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') };
  const sb = await startSandbox({ port: 0, host: '127.0.0.1' });
  const adapter = createHttpAdapter({ baseUrl: sb.url, authUrl: sb.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET });
  const runtime = new Runtime({ store, adapter, bots: [orderBot], sender: SANDBOX_SENDER, clock: new ManualClock(Date.now()), logger });
  await runtime.start();
  const server = await listen(createWebhookRouter({ runtime, defaultSender: SANDBOX_SENDER, secret: SECRET }));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
  afterThisTest(async () => {
    await runtime.stop();
    await adapter.close();
    await store.close();
    await closeServer(server);
    await sb.close();
  });
  return {
    lines,
    runtime,
    async post(body, o = {}) {
      const raw = JSON.stringify(body);
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      const signature = o.signature === undefined ? signBody(SECRET, raw) : o.signature;
      if (signature !== null) headers[SIGNATURE_HEADER] = signature;
      const res = await fetch(url, { method: 'POST', headers, body: raw });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    },
    async count(table) {
      const sql = `SELECT COUNT(*)::int AS n FROM ${table}`;
      if (store instanceof PgStore) return (await store.db.query<{ n: number }>(sql)).rows[0]!.n;
      return (store.db.prepare(sql.replace('::int', '')).get() as { n: number }).n;
    },
    alerts: () => lines.filter((l) => l.obj['field'] === 'flows'),
    counted: (event) => runtime.metrics.value('colloquy_flow_alerts_total', { event }),
  };
}

const WABA = '102290129340398';
const flows = (...values: unknown[]) => ({ object: 'whatsapp_business_account', entry: [{ id: WABA, time: 1_700_000_000, changes: values.map((value) => ({ field: 'flows', value })) }] });

/** One notification of each kind, as Meta's reference shows them. */
const KINDS = [
  {
    value: {
      event: 'ENDPOINT_ERROR_RATE',
      message: 'Flow 1234 endpoint error rate is above 10%',
      flow_id: '1234',
      error_rate: 12.5,
      threshold: 10,
      alert_state: 'ACTIVATED',
      errors: [
        { error_type: 'TIMEOUT_ERROR', error_rate: 8.5, error_count: 17 },
        { error_type: 'INVALID_RESPONSE', error_rate: 4, error_count: 8 },
      ],
    },
    level: 'warn',
    msg: 'WhatsApp flow alert: ENDPOINT_ERROR_RATE ACTIVATED (flow 1234)',
  },
  {
    value: { event: 'ENDPOINT_LATENCY', message: 'p90 latency above 1s', flow_id: '1234', p50_latency: 800, p90_latency: 1500, requests_count: 200, threshold: 1000, alert_state: 'ACTIVATED' },
    level: 'warn',
    msg: 'WhatsApp flow alert: ENDPOINT_LATENCY ACTIVATED (flow 1234)',
  },
  {
    value: { event: 'ENDPOINT_AVAILABILITY', message: 'Availability recovered', flow_id: '1234', availability: 99.5, threshold: 90, alert_state: 'DEACTIVATED' },
    level: 'info',
    msg: 'WhatsApp flow alert: ENDPOINT_AVAILABILITY DEACTIVATED (flow 1234)',
  },
  {
    value: { event: 'CLIENT_ERROR_RATE', message: 'Client error rate recovered', flow_id: '1234', error_rate: 1, threshold: 5, alert_state: 'DEACTIVATED', errors: [] },
    level: 'info',
    msg: 'WhatsApp flow alert: CLIENT_ERROR_RATE DEACTIVATED (flow 1234)',
  },
  {
    value: { event: 'FLOW_STATUS_CHANGE', message: 'Flow 1234 changed status from PUBLISHED to THROTTLED', flow_id: '1234', old_status: 'PUBLISHED', new_status: 'THROTTLED' },
    level: 'warn',
    msg: 'WhatsApp flow status changed: PUBLISHED → THROTTLED (flow 1234)',
  },
] as const;

/** The line's fields for a value: Meta's names, its `message` as `detail`, plus the WABA. */
function expectedFields(value: Record<string, unknown>): Record<string, unknown> {
  const { message, ...rest } = value;
  return { field: 'flows', waba_id: WABA, ...rest, detail: message };
}

describe('the flows webhook field', () => {
  it('logs and counts each kind of alert, answers 200, and stores nothing nor runs a turn', async () => {
    const s = await setup();
    for (const kind of KINDS) {
      const r = await s.post(flows(kind.value));
      expect(r.status, kind.value.event).toBe(200);
      expect(r.json).toEqual({ ok: true, received: 0, duplicates: 0, statuses: 0, flowAlerts: 1 });
      const line = s.alerts().at(-1);
      expect(line, kind.value.event).toEqual({ level: kind.level, obj: expectedFields(kind.value), msg: kind.msg });
      expect(s.counted(kind.value.event)).toBe(1);
    }
    expect(s.alerts()).toHaveLength(KINDS.length);
    expect([await s.count('inbox'), await s.count('outbox'), await s.count('conversations')]).toEqual([0, 0, 0]);
    const text = await s.runtime.metrics.render();
    for (const kind of KINDS) expect(text).toContain(`colloquy_flow_alerts_total{event="${kind.value.event}"} 1`);
  });

  it('warns while a flow is throttled or blocked, and tells of its recovery at info', async () => {
    const s = await setup();
    const steps = [
      ['PUBLISHED', 'THROTTLED', 'warn'],
      ['THROTTLED', 'BLOCKED', 'warn'],
      ['BLOCKED', 'THROTTLED', 'warn'],
      ['THROTTLED', 'PUBLISHED', 'info'],
      ['DRAFT', 'PUBLISHED', 'info'],
      ['PUBLISHED', 'DEPRECATED', 'info'],
    ] as const;
    const r = await s.post(flows(...steps.map(([old_status, new_status]) => ({ event: 'FLOW_STATUS_CHANGE', flow_id: '77', old_status, new_status }))));
    expect(r.status).toBe(200);
    expect(r.json['flowAlerts']).toBe(steps.length);
    expect(s.alerts().map((l) => [l.obj['old_status'], l.obj['new_status'], l.level])).toEqual(steps);
    expect(s.alerts()[1]!.msg).toBe('WhatsApp flow status changed: THROTTLED → BLOCKED (flow 77)');
    expect(s.counted('FLOW_STATUS_CHANGE')).toBe(steps.length);
  });

  it('counts an unknown event under its own name, and a name not of Meta’s shape as OTHER', async () => {
    const s = await setup();
    const long = 'A'.repeat(65);
    const r = await s.post(flows({ event: 'FLOW_VERSION_EXPIRY_WARNING', flow_id: '9', message: 'version expires soon' }, { event: 'lower-case' }, { flow_id: '9' }, { event: long }, { event: 42 }));
    expect(r.status).toBe(200);
    expect(s.counted('FLOW_VERSION_EXPIRY_WARNING')).toBe(1);
    expect(s.counted('OTHER')).toBe(4);
    expect(s.runtime.metrics.total('colloquy_flow_alerts_total')).toBe(5);
    const [known, lower, unnamed] = s.alerts();
    expect(known).toEqual({
      level: 'info',
      obj: { field: 'flows', waba_id: WABA, event: 'FLOW_VERSION_EXPIRY_WARNING', flow_id: '9', detail: 'version expires soon' },
      msg: 'WhatsApp flow alert: FLOW_VERSION_EXPIRY_WARNING (flow 9)',
    });
    expect(lower!.obj['event']).toBe('lower-case');
    expect(unnamed!.msg).toBe('WhatsApp flow alert: unnamed event (flow 9)');
  });

  it('reads odd fields leniently: an unexpected type is left out, plain extra fields are kept, nothing crashes', async () => {
    const s = await setup();
    const value = {
      event: 'ENDPOINT_LATENCY',
      flow_id: 1234,
      alert_state: 7,
      p90_latency: 'slow',
      p50_latency: null,
      threshold: 1000,
      requests_count: 120,
      errors: 'many',
      region: 'EU',
      window_minutes: 60,
      nested: { not: 'kept' },
      message: 'x'.repeat(5000),
    };
    const r = await s.post(flows(value, { event: 'CLIENT_ERROR_RATE', alert_state: 'ACTIVATED', errors: [{ error_type: 'SCREEN_ERROR', error_count: '3' }, 'junk', null] }));
    expect(r.status).toBe(200);
    const [latency, client] = s.alerts();
    expect(latency!.level).toBe('info'); // an alert_state that is not a string says nothing about the alert
    expect(latency!.obj).toEqual({
      field: 'flows',
      waba_id: WABA,
      event: 'ENDPOINT_LATENCY',
      flow_id: '1234',
      threshold: 1000,
      requests_count: 120,
      detail: `${'x'.repeat(1000)}…`,
      extra: { region: 'EU', window_minutes: 60 },
    });
    expect(client).toMatchObject({ level: 'warn', obj: { event: 'CLIENT_ERROR_RATE', alert_state: 'ACTIVATED', errors: [{ error_type: 'SCREEN_ERROR' }] } });
    expect(s.counted('ENDPOINT_LATENCY')).toBe(1);
    expect(s.counted('CLIENT_ERROR_RATE')).toBe(1);
  });

  it('stores the message and counts the alert of a body holding both a messages and a flows change', async () => {
    const s = await setup();
    const body = webhookPayload({ messages: [textMessage({ from: USER, text: 'hi' })] }) as { entry: { changes: unknown[] }[] };
    body.entry[0]!.changes.push({ field: 'flows', value: KINDS[1].value });
    const r = await s.post(body);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, received: 1, duplicates: 0, statuses: 0, flowAlerts: 1 });
    expect(await s.count('inbox')).toBe(1);
    expect(s.counted('ENDPOINT_LATENCY')).toBe(1);
    expect(s.alerts()).toHaveLength(1);
    await s.runtime.idle();
    expect(await s.count('conversations')).toBe(1); // the message's turn ran; the alert's did not exist
  });

  it('refuses a flows change whose value is not an object (400, naming it) and stores nothing of the request', async () => {
    const s = await setup();
    for (const bad of ['garbage', null, 42, [], undefined]) {
      const body = webhookPayload({ messages: [textMessage({ from: USER, text: 'hi' })] }) as { entry: { changes: unknown[] }[] };
      body.entry[0]!.changes.push({ field: 'flows', ...(bad !== undefined && { value: bad }) });
      const r = await s.post(body);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      const error = r.json['error'] as { code: string; issues: { path: string; message: string }[] };
      expect(error.code).toBe('invalid_payload');
      // A change with no value at all is refused by the envelope's own check, whatever its field.
      const message = bad === undefined ? expect.any(String) : 'must be an object: a flows notification (event, flow_id, …)';
      expect(error.issues).toEqual([{ path: 'entry[0].changes[1].value', message }]);
    }
    expect(await s.count('inbox')).toBe(0);
    expect(s.alerts()).toEqual([]);
    expect(s.runtime.metrics.total('colloquy_flow_alerts_total')).toBe(0);
  });

  it('reports the alerts of a request whose other items were stored though one was refused for good (422 unstorable)', async () => {
    const store = await openPgStore(await freshDatabaseUrl());
    const s = await setup(store);
    // The real PostgreSQL refuses the one message, as it would a value it cannot hold.
    await store.db.query(`CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.event LIKE '%poison%' THEN RAISE EXCEPTION 'refused by the test' USING ERRCODE = '22021'; END IF; RETURN NEW; END $$`);
    await store.db.query('CREATE TRIGGER poison BEFORE INSERT ON inbox FOR EACH ROW EXECUTE FUNCTION poison()');
    const body = webhookPayload({ messages: [textMessage({ from: USER, text: 'poison' }), textMessage({ from: USER, text: 'fine' })] }) as { entry: { changes: unknown[] }[] };
    body.entry[0]!.changes.push({ field: 'flows', value: KINDS[4].value });
    const r = await s.post(body);
    expect(r.status).toBe(422);
    expect((r.json['error'] as { code: string }).code).toBe('unstorable');
    expect(await s.count('inbox')).toBe(1);
    expect(s.alerts()).toHaveLength(1);
    expect(s.counted('FLOW_STATUS_CHANGE')).toBe(1);
    await s.runtime.idle();
  });

  it('checks the signature of a flows body like any other: unsigned or wrongly signed is 401 and counts nothing', async () => {
    const s = await setup();
    const body = flows(KINDS[0].value);
    expect((await s.post(body, { signature: null })).status).toBe(401);
    expect((await s.post(body, { signature: signBody('another-secret', JSON.stringify(body)) })).status).toBe(401);
    expect(s.alerts()).toEqual([]);
    expect(s.counted('ENDPOINT_ERROR_RATE')).toBe(0);
    expect((await s.post(body)).status).toBe(200);
    expect(s.counted('ENDPOINT_ERROR_RATE')).toBe(1);
  });
});
