/**
 * The safety net behind validation: a store failure that is permanent for that input (a
 * PostgreSQL data exception, class 22, or a program limit, class 54) is answered 4xx with its
 * reason and logged, never 500 "deliver again later"; a transient one (a serialization failure)
 * stays 503. Triggers on the real test PostgreSQL raise the errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { PgStore } from '../../src/store/postgres/store.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { BOT_NUMBER, claimedHandoff, postSigned, request, serverOn, USER } from './poison-support.js';

let s: RunningServer;
beforeAll(async () => {
  s = await serverOn(await freshDatabaseUrl());
}, 60_000);
afterAll(async () => {
  await s.close();
});

const db = () => (s.store as PgStore).db;

/** Makes inserts into `table` whose `column` holds `word` fail with SQLSTATE `state`; returns the undo. */
async function failInserts(table: string, column: string, word: string, state: string): Promise<() => Promise<void>> {
  await db().query(`CREATE FUNCTION poison_${table}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.${column} LIKE '%${word}%' THEN RAISE EXCEPTION 'refused by the test' USING ERRCODE = '${state}'; END IF; RETURN NEW; END $$`);
  await db().query(`CREATE TRIGGER poison_${table} BEFORE INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION poison_${table}()`);
  return async () => {
    await db().query(`DROP TRIGGER poison_${table} ON ${table}`);
    await db().query(`DROP FUNCTION poison_${table}()`);
  };
}

/** One delivery of text messages, each `[id, body]`, in one change. */
const texts = (...messages: readonly (readonly [string, string])[]) =>
  Buffer.from(
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'W',
          changes: [
            {
              field: 'messages',
              value: { metadata: { display_phone_number: BOT_NUMBER }, messages: messages.map(([id, body]) => ({ from: USER, id, timestamp: '1700000000', type: 'text', text: { body } })) },
            },
          ],
        },
      ],
    }),
  );
const text = (id: string, body: string) => texts([id, body]);

describe('a store error that is permanent for the input', () => {
  it.each([
    ['22021', 'an invalid byte sequence'],
    ['22P05', 'an untranslatable character'],
    ['22001', 'a string too long'],
    ['54000', 'an index row too large'],
  ])('SQLSTATE %s (%s) on an inbound is a 422 with the reason, not a 500', async (state) => {
    const undo = await failInserts('inbox', 'event', `poison-${state}`, state);
    try {
      const a = await postSigned(s, '/webhook', text(`wamid.poison-${state}`, `poison-${state}`));
      expect(a.status).toBe(422);
      expect(JSON.parse(a.text).error).toMatchObject({
        code: 'unstorable',
        message: expect.stringContaining(state),
        issues: [{ path: 'entry[0].changes[0].value.messages[0]', message: expect.stringContaining('refused by the test') }],
      });
    } finally {
      await undo();
    }
  });

  it('an unstorable item refuses only itself: the valid items around it in the delivery are stored and run', async () => {
    const undo = await failInserts('inbox', 'event', 'poison-middle', '22021');
    const delivery = texts(['wamid.before', 'hello before'], ['wamid.middle', 'poison-middle'], ['wamid.after', 'hello after']);
    try {
      const a = await postSigned(s, '/webhook', delivery);
      expect(a.status).toBe(422);
      const error = JSON.parse(a.text).error;
      expect(error.code).toBe('unstorable');
      expect(error.message).toContain('entry[0].changes[0].value.messages[1] (22021');
      expect(error.message).not.toContain('poison-middle'); // the message is logged: codes, never the payload
      expect(error.issues).toEqual([{ path: 'entry[0].changes[0].value.messages[1]', message: expect.stringContaining('refused by the test') }]);
      await s.runtime.idle();
      const rows = await db().query<{ provider_id: string; state: string }>("SELECT provider_id, state FROM inbox WHERE provider_id LIKE 'wamid.%' ORDER BY id");
      expect(rows.rows.filter((r) => ['wamid.before', 'wamid.middle', 'wamid.after'].includes(r.provider_id))).toEqual([
        { provider_id: 'wamid.before', state: 'done' },
        { provider_id: 'wamid.after', state: 'done' },
      ]);
      // The provider delivers it again: the stored items are duplicates, the middle one is refused again.
      const again = await postSigned(s, '/webhook', delivery);
      expect(again.status).toBe(422);
      expect(JSON.parse(again.text).error.issues).toHaveLength(1);
      expect((await db().query("SELECT count(*)::int AS n FROM inbox WHERE provider_id IN ('wamid.before', 'wamid.after')")).rows[0]).toEqual({ n: 2 });
    } finally {
      await undo();
    }
  });

  it.each([
    ['22012', 'a division by zero'],
    ['22023', 'an invalid parameter value'],
    ['54001', 'a statement too complex'],
  ])("SQLSTATE %s (%s), the server's fault rather than the payload's, stays a 500", async (state) => {
    const undo = await failInserts('inbox', 'event', `server-${state}`, state);
    try {
      expect((await postSigned(s, '/webhook', text(`wamid.server-${state}`, `server-${state}`))).status).toBe(500);
    } finally {
      await undo();
    }
  });

  it('a serialization failure (transient) stays a 503: a later delivery gets through', async () => {
    const undo = await failInserts('inbox', 'event', 'transient-40001', '40001');
    try {
      const a = await postSigned(s, '/webhook', text('wamid.transient', 'transient-40001'));
      expect(a.status).toBe(503);
    } finally {
      await undo();
    }
    expect((await postSigned(s, '/webhook', text('wamid.transient', 'transient-40001'))).status).toBe(200);
  });

  it("an agents' API write failing with a data exception is a 422, not a 500", async () => {
    const id = await claimedHandoff(s, '5215512340555', 'ana');
    const undo = await failInserts('outbox', 'message', 'poison-agent', '22021');
    try {
      const a = await request(s, 'POST', `/agent/handoffs/${id}/messages`, JSON.stringify({ agent: 'ana', text: 'poison-agent' }));
      expect(a.status).toBe(422);
      expect(JSON.parse(a.text).error.code).toBe('unstorable');
    } finally {
      await undo();
    }
  });
});
