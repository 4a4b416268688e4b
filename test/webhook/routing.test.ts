/** Routing inbounds to bots by the number the user wrote to. */
import { describe, expect, it } from 'vitest';
import { Runtime, defineBot } from '../../src/conversation/index.js';
import { ConfigError } from '../../src/errors.js';
import { SANDBOX_SENDER, inboundSms, statusUpdate, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { openSqliteStore } from '../../src/store/sqlite/store.js';
import type { SendAdapter } from '../../src/transport/index.js';
import { BotNumbers, createWebhookRouter } from '../../src/webhook/index.js';
import orderBot, { machine } from '../fixtures/order-bot.js';
import { USER, codeOf, stack } from './helpers.js';

const OTHER = '15550000002';
const otherBot = defineBot({ id: 'order-two', machine, options: { sender: OTHER } });

const noAdapter: SendAdapter = { send: () => Promise.reject(new Error('not used')), close: () => Promise.resolve() };

describe('routing by number', () => {
  it('sends each inbound to the bot whose number was written to', async () => {
    const s = await stack({ bots: [orderBot, otherBot] });
    const toOther = webhookPayload({ displayPhoneNumber: `+1 555 000 0002`, messages: [textMessage({ from: USER, text: 'hi' })] });
    expect((await s.post('/webhook', toOther)).status).toBe(200);
    const toDefault = webhookPayload({ displayPhoneNumber: SANDBOX_SENDER, messages: [textMessage({ from: '5215500000009', text: 'hi' })] });
    expect((await s.post('/webhook', toDefault)).status).toBe(200);
    expect((await s.post('/webhook/sms', inboundSms({ from: '5215500000010', to: OTHER, text: 'hola' }))).status).toBe(200);
    await s.runtime.idle();
    const rows = s.store.db.prepare('SELECT bot_id, user_number AS user FROM inbox ORDER BY id').all();
    expect(rows).toEqual([
      { bot_id: 'order-two', user: USER },
      { bot_id: 'order', user: '5215500000009' },
      { bot_id: 'order-two', user: '5215500000010' },
    ]);
    const froms = s.sb.sandbox.messages.map((m) => (m.channel === 'interactive' ? `${m.from}>${m.to}` : `sms>${m.to}`));
    expect(froms).toEqual(expect.arrayContaining([`${OTHER}>${USER}`, `${SANDBOX_SENDER}>5215500000009`]));
  });

  it('refuses an unknown number with 422 and stores nothing', async () => {
    const s = await stack({ bots: [orderBot, otherBot] });
    const known = textMessage({ from: USER, text: 'ok' });
    const body = webhookPayload({ displayPhoneNumber: '15559999999', messages: [textMessage({ from: USER, text: 'hi' })] });
    const both = { object: 'whatsapp_business_account', entry: [...(webhookPayload({ messages: [known] })['entry'] as unknown[]), ...(body['entry'] as unknown[])] };
    for (const payload of [body, both]) {
      const r = await s.post('/webhook', payload);
      expect(r.status).toBe(422);
      expect(codeOf(r)).toBe('unknown_number');
      expect(r.text).toContain('15559999999');
    }
    const sms = await s.post('/webhook/sms', inboundSms({ from: USER, to: '15559999999', text: 'hi' }));
    expect(sms.status).toBe(422);
    expect(s.count('inbox')).toBe(0);
  });

  it('with one bot, still refuses a number it does not serve: 422, nothing stored, no answer', async () => {
    const s = await stack({ bots: [orderBot] });
    const r = await s.post('/webhook', webhookPayload({ displayPhoneNumber: '19998887777', messages: [textMessage({ from: USER, text: 'hi' })] }));
    expect(r.status).toBe(422);
    expect(codeOf(r)).toBe('unknown_number');
    expect(r.text).toContain('19998887777');
    expect(r.text).toContain(SANDBOX_SENDER);
    const sms = await s.post('/webhook/sms', inboundSms({ from: USER, to: '19998887777', text: 'hi' }));
    expect(sms.status).toBe(422);
    expect(codeOf(sms)).toBe('unknown_number');
    await s.runtime.idle();
    expect(s.count('inbox')).toBe(0);
    expect(s.count('conversations')).toBe(0);
    expect(s.sb.sandbox.messages).toHaveLength(0);
    const own = await s.post('/webhook', webhookPayload({ displayPhoneNumber: `+${SANDBOX_SENDER}`, messages: [textMessage({ from: USER, text: 'hi' })] }));
    expect(own.status).toBe(200);
    await s.runtime.idle();
    expect(s.sb.sandbox.messages).toHaveLength(1);
  });

  it('acknowledges statuses about a number no bot serves without storing them', async () => {
    const s = await stack({ bots: [orderBot] });
    const status = statusUpdate({ id: 'wamid.elsewhere', status: 'delivered', recipient: USER });
    const r = await s.post('/webhook', webhookPayload({ displayPhoneNumber: '19998887777', statuses: [status] }));
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ ok: true, received: 0, duplicates: 0, statuses: 0, ignoredStatuses: 1 });
    expect(s.count('statuses')).toBe(0);
    const ours = await s.post('/webhook', webhookPayload({ displayPhoneNumber: SANDBOX_SENDER, statuses: [status] }));
    expect(ours.json).toEqual({ ok: true, received: 0, duplicates: 0, statuses: 1 });
    expect(s.count('statuses')).toBe(1);
  });

  it('the sandbox writes to the number a tap answers and reports statuses about the sending number', async () => {
    const s = await stack({ bots: [otherBot] });
    expect((await s.sb.sandbox.deliver.text(USER, 'hi')).status).toBe(422); // the sandbox's own number is not served
    expect((await s.sb.sandbox.deliver.text(USER, 'hi', { to: OTHER })).status).toBe(200);
    await s.runtime.idle();
    const menu = s.sb.sandbox.messages.at(-1);
    expect(menu?.channel === 'interactive' && menu.from).toBe(OTHER);
    const tap = await s.sb.sandbox.deliver.listReply(USER, { id: 'margherita', title: 'Margherita' });
    expect(tap.status).toBe(200);
    const status = await s.sb.sandbox.deliver.status(menu!.providerId, 'read');
    expect(JSON.parse(status.body)).toEqual({ ok: true, received: 0, duplicates: 0, statuses: 1 });
    await s.runtime.idle();
    expect(s.sb.sandbox.messages).toHaveLength(2);
  });

  it('routes two versions of one bot (same id, same sender) without calling it a clash', async () => {
    const again = defineBot({ id: 'order', machine, options: { sender: SANDBOX_SENDER } });
    const numbers = new BotNumbers([orderBot, again], SANDBOX_SENDER);
    expect(numbers.botIdFor(`+${SANDBOX_SENDER}`)).toBe('order');
    expect(numbers.botIdFor('19998887777')).toBeUndefined();
  });

  it('throws ConfigError when two bots share a number', async () => {
    const store = openSqliteStore(':memory:');
    const twin = defineBot({ id: 'twin', machine, options: { sender: SANDBOX_SENDER } });
    const runtime = new Runtime({ store, adapter: noAdapter, bots: [orderBot, twin], sender: SANDBOX_SENDER });
    expect(() => createWebhookRouter({ runtime, defaultSender: SANDBOX_SENDER })).toThrow(ConfigError);
    const ok = new Runtime({ store, adapter: noAdapter, bots: [orderBot, otherBot], sender: SANDBOX_SENDER });
    expect(() => createWebhookRouter({ runtime: ok, defaultSender: SANDBOX_SENDER })).not.toThrow();
    expect(() => createWebhookRouter({ runtime: ok, defaultSender: SANDBOX_SENDER, maxBodyBytes: 0 })).toThrow(ConfigError);
    expect(() => createWebhookRouter({ runtime: ok, defaultSender: SANDBOX_SENDER, secret: '' })).toThrow(ConfigError);
    await store.close();
  });
});
