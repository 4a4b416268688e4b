/**
 * A webhook is answered 200 only after the COMMIT that holds its inbound, and that COMMIT is
 * durable (the store's write connection runs `synchronous = FULL`: test/store/durable.test.ts).
 * Another connection holds the write lock, as another process would: the inbound's commit waits,
 * and so does the 200.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { textMessage, webhookPayload } from '../../src/sandbox/index.js';
import orderBot from '../fixtures/order-bot.js';
import { eventually } from '../support/eventually.js';
import { USER, afterThisTest, stack } from './helpers.js';

describe('the webhook’s 200 and the durable commit', () => {
  it('answers only once the inbound’s commit went through, on a connection that fsyncs every commit', async () => {
    const s = await stack({ bots: [orderBot] });
    expect(s.store.db.pragma('synchronous', { simple: true })).toBe(2);
    const other = new Database(s.store.db.name);
    afterThisTest(async () => void other.close());
    const before = s.store.stats().busyRetries;
    other.exec('BEGIN IMMEDIATE');
    let released = false;
    let answeredWhileLocked: boolean | undefined;
    const answer = s.post('/webhook', webhookPayload({ messages: [textMessage({ from: USER, text: 'hi', id: 'wamid.durable' })] })).then((a) => {
      answeredWhileLocked = !released;
      return a;
    });
    // The inbound's group commit met the lock and was tried again and again, with the event loop
    // free between tries: an answer sent before the commit would have reached us by then.
    await eventually(
      () => {
        const st = s.store.stats();
        expect(st.busyRetries, `busy retries (queued: ${st.queued})`).toBeGreaterThanOrEqual(before + 3);
        expect(st.queued, 'queued commits').toBeGreaterThan(0);
      },
      { timeoutMs: 5_000, intervalMs: 10, what: 'a commit held by the lock, tried three times' },
    );
    expect(answeredWhileLocked).toBeUndefined();
    released = true;
    other.exec('COMMIT');
    expect((await answer).status).toBe(200);
    expect(answeredWhileLocked).toBe(false);
    expect(other.prepare('SELECT COUNT(*) AS n FROM inbox WHERE provider_id = ?').get('wamid.durable')).toEqual({ n: 1 });
    await s.runtime.idle();
  });
});
