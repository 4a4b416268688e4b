/** Redeliveries (sequential and concurrent) and delivery statuses (out of order, repeated, failed). */
import { describe, expect, it } from 'vitest';
import { newMessageId, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import orderBot from '../fixtures/order-bot.js';
import { USER, stack, type Stack } from './helpers.js';

/** Starts a conversation so that the bot's list message is sent; returns its provider id. */
async function listSent(s: Stack): Promise<string> {
  expect((await s.sb.sandbox.deliver.text(USER, 'hi')).status).toBe(200);
  await s.runtime.idle();
  const list = s.sb.sandbox.messages[0];
  expect(list?.channel).toBe('interactive');
  return list!.providerId;
}

describe('redelivery', () => {
  it('a webhook delivered twice runs one turn and sends one reply', async () => {
    const s = await stack({ bots: [orderBot] });
    const body = webhookPayload({ messages: [textMessage({ from: USER, id: newMessageId(), text: 'hi' })] });
    const first = await s.post('/webhook', body);
    const second = await s.post('/webhook', body);
    expect(first.json).toEqual({ ok: true, received: 1, duplicates: 0, statuses: 0 });
    expect(second.json).toEqual({ ok: true, received: 1, duplicates: 1, statuses: 0 });
    await s.runtime.idle();
    expect(s.count('inbox')).toBe(1);
    expect(s.sb.sandbox.messages).toHaveLength(1);
    expect(s.runtime.metrics.value('colloquy_turns_total', { bot: 'order', outcome: 'ok' })).toBe(1);
  });

  it('five concurrent deliveries of one webhook run one turn and send one reply', async () => {
    const s = await stack({ bots: [orderBot] });
    const body = webhookPayload({ messages: [textMessage({ from: USER, id: newMessageId(), text: 'hi' })] });
    const answers = await Promise.all(Array.from({ length: 5 }, () => s.post('/webhook', body)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.filter((a) => (a.json as { duplicates: number }).duplicates === 0)).toHaveLength(1);
    await s.runtime.idle();
    expect(s.count('inbox')).toBe(1);
    expect(s.sb.sandbox.messages).toHaveLength(1);
    expect(s.runtime.metrics.value('colloquy_turns_total', { bot: 'order', outcome: 'ok' })).toBe(1);
  });
});

describe('statuses', () => {
  it('out of order (read, delivered, sent) ends as read; repeats are kept once', async () => {
    const s = await stack({ bots: [orderBot] });
    const id = await listSent(s);
    for (const status of ['read', 'delivered', 'sent'] as const) {
      const r = await s.sb.sandbox.deliver.status(id, status);
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ ok: true, received: 0, statuses: 1 });
    }
    expect((await s.store.outboundByProviderId(id))?.deliveryStatus).toBe('read');
    await s.sb.sandbox.deliver.status(id, 'read');
    await s.sb.sandbox.deliver.status(id, 'delivered');
    expect(s.count('statuses')).toBe(3);
    const stored = await s.store.statuses(id);
    expect(stored.map((x) => x.status).sort()).toEqual(['delivered', 'read', 'sent']);
    expect(stored.every((x) => x.recipient === USER && typeof x.timestamp === 'number')).toBe(true);
    expect((await s.store.outboundByProviderId(id))?.deliveryStatus).toBe('read');
    expect(s.count('inbox')).toBe(1);
  });

  it('a status about a message we never sent is acknowledged and kept', async () => {
    const s = await stack({ bots: [orderBot] });
    const r = await s.sb.sandbox.deliver.status('wamid.unknown', 'delivered', { recipient: USER });
    expect(r.status).toBe(200);
    expect(s.count('statuses')).toBe(1);
  });

  it('a failed status of a sent interactive message falls back to SMS by default', async () => {
    const s = await stack({ bots: [orderBot] });
    const id = await listSent(s);
    const row = await s.store.outboundByProviderId(id);
    expect((await s.sb.sandbox.deliver.status(id, 'failed')).status).toBe(200);
    await s.runtime.idle();
    const fallback = s.store.db.prepare(`SELECT channel, state, fallback_of FROM outbox WHERE fallback_of IS NOT NULL`).all();
    expect(fallback).toEqual([{ channel: 'sms', state: 'sent', fallback_of: row?.id }]);
    expect(s.store.db.prepare(`SELECT COUNT(*) AS n FROM inbox WHERE provider_id LIKE 'delivery:%'`).get()).toEqual({ n: 0 });
  });

  it('with fallback off, a failed status of a sent interactive message reaches the bot as delivery.failed', async () => {
    const s = await stack({ bots: [{ ...orderBot, options: { ...orderBot.options, fallback: { enabled: false } } }] });
    const id = await listSent(s);
    const row = await s.store.outboundByProviderId(id);
    const r = await s.sb.sandbox.deliver.status(id, 'failed');
    expect(r.status).toBe(200);
    await s.runtime.idle();
    const delivery = s.store.db.prepare(`SELECT * FROM inbox WHERE provider_id LIKE 'delivery:%'`).all() as Record<string, string>[];
    expect(delivery).toHaveLength(1);
    expect(delivery[0]?.['provider_id']).toBe(`delivery:${row?.id}`);
    expect(JSON.parse(delivery[0]!['event']!)).toMatchObject({ type: 'delivery.failed', channel: 'interactive', messageId: row?.id });
    const statuses = await s.store.statuses(id);
    expect(statuses.find((x) => x.status === 'failed')?.errors).toEqual([expect.objectContaining({ code: 131047 })]);
  });
});
