/**
 * The safety net behind validation: a store failure that is permanent for that input (a
 * PostgreSQL data exception, class 22, or a program limit, class 54) is answered 4xx with its
 * reason and logged, never 500 "deliver again later"; a transient one (a serialization failure)
 * stays 503. Triggers on the real test PostgreSQL raise the errors.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { PgStore } from '../../src/store/pg.js';
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

const text = (id: string, body: string) =>
  Buffer.from(
    JSON.stringify({
      object: 'whatsapp_business_account',
      entry: [
        { id: 'W', changes: [{ field: 'messages', value: { metadata: { display_phone_number: BOT_NUMBER }, messages: [{ from: USER, id, timestamp: '1700000000', type: 'text', text: { body } }] } }] },
      ],
    }),
  );

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
      expect(JSON.parse(a.text).error).toMatchObject({ code: 'unstorable', message: expect.stringContaining('refused by the test') });
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
