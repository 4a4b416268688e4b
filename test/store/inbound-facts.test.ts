/** Colloquy's own inbounds' facts: encoded into `raw` when written, decoded once when read. */
import { describe, expect, it } from 'vitest';
import { decodeFacts, deliveryRaw, timerRaw } from '../../src/store/inbound-facts.js';
import { toInbox, toTimerInbound } from '../../src/store/rows.js';

const T0 = 1_700_000_000_000;
/** A raw inbox row as both engines return it (JSON columns as text). */
const row = (source: string, raw: unknown) => ({
  id: 1,
  provider_id: 'p',
  bot_id: 'shop',
  user_number: '5215512345678',
  source,
  event: JSON.stringify({ type: 'x' }),
  raw: raw === undefined ? null : JSON.stringify(raw),
  state: 'pending',
  conversation_id: null,
  attempts: 0,
  error: null,
  received_at: T0,
  processed_at: null,
});

describe('inbound facts', () => {
  it("round-trips a fired timer: the timer row's inbound reads back with a typed timer", () => {
    const fired = toTimerInbound({ id: 3, conversation_id: 7, bot_id: 'shop', user_number: '5215512345678', key: 'due', event: '{"type":"xstate.after.due"}', fire_at: T0 + 5 }, T0 + 6);
    expect(fired.raw).toEqual({ key: 'due', fireAt: T0 + 5, conversationId: 7 });
    expect(toInbox(row('timer', fired.raw))).toMatchObject({ timer: { key: 'due', fireAt: T0 + 5, conversationId: 7 }, raw: fired.raw });
  });

  it('round-trips a delivery failure and reads a handoff release', () => {
    expect(toInbox(row('delivery', deliveryRaw({ conversationId: 7, outboxId: 9 }))).delivery).toEqual({ conversationId: 7, outboxId: 9 });
    expect(toInbox(row('delivery', { conversationId: 7 })).delivery).toEqual({ conversationId: 7 });
    expect(toInbox(row('internal', { conversationId: 7, handoffId: 4 })).release).toEqual({ conversationId: 7, handoffId: 4 });
  });

  it('gives each fact only to its own source', () => {
    const r = toInbox(row('timer', timerRaw({ key: 'k', fireAt: T0, conversationId: 7 })));
    expect([r.delivery, r.release]).toEqual([undefined, undefined]);
    // A provider's payload never carries our facts, whatever it holds.
    for (const source of ['whatsapp', 'sms', 'api']) expect(decodeFacts(source, { key: 'k', fireAt: T0, conversationId: 7 })).toEqual({});
  });

  it('reads a row whose raw does not have the shape as carrying no facts', () => {
    const bad: unknown[] = [
      undefined,
      null,
      'text',
      7,
      [],
      {},
      { conversationId: '7', key: 'k', fireAt: T0 },
      { conversationId: 7.5, key: 'k', fireAt: T0 },
      { conversationId: 7, key: 3, fireAt: T0 },
      { conversationId: 7, key: 'k' },
    ];
    for (const raw of bad) expect(decodeFacts('timer', raw)).toEqual({});
    expect(decodeFacts('delivery', { outbox: 9 })).toEqual({});
    expect(decodeFacts('internal', { handoffId: 4 })).toEqual({});
    const plain = toInbox(row('timer', undefined));
    expect('timer' in plain).toBe(false);
  });
});
