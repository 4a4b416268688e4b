/**
 * A send that fails for now is recorded with its next try and tried again at that time, on both
 * engines (the next try is whole milliseconds: PostgreSQL stores it as a BIGINT).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import counterBot from '../fixtures/counter-bot.js';
import { ENGINES, USER, textEvent, world, type World } from './helpers.js';

let w: World<Store> | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

describe.each(ENGINES)('a send that fails for now, on %s', (engine) => {
  it('is recorded as pending with its attempt and next try, then sent at that time', async () => {
    w = await world([counterBot], { engine, sends: { baseDelayMs: 1000, maxAttempts: 3 } });
    w.sb.sandbox.faults.fail('sms', { status: 500, times: 3 }); // one attempt: the adapter tries 3 times
    await w.send(textEvent('hi'));
    const [row] = await w.rows('SELECT state, attempts, next_attempt_at, error FROM outbox');
    expect(row).toMatchObject({ state: 'pending', attempts: 1, error: expect.stringContaining('HTTP 500') });
    const next = Number(row!['next_attempt_at']);
    expect(Number.isInteger(next)).toBe(true);
    expect(next).toBeGreaterThan(w.clock.now());
    w.clock.advance(next - w.clock.now());
    await w.runtime.idle();
    expect(await w.rows('SELECT state, attempts FROM outbox')).toEqual([{ state: 'sent', attempts: 2 }]);
    expect(w.sb.sandbox.messagesTo(USER).map((m) => (m.channel === 'sms' ? m.text : '?'))).toEqual(['#1']);
  });
});
