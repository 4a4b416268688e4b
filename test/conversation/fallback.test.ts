import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import type { Message } from '../../src/index.js';
import { renderSms } from '../../src/messages/index.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import orderBot from '../fixtures/order-bot.js';
import variantsBot from '../fixtures/variants-bot.js';
import type { Store } from '../../src/store/types.js';
import { ENGINES, freshDatabase, reply, sandbox, textEvent, world, type World } from './helpers.js';
import { tempDir } from '../support/temp.js';

let sb: RunningSandbox;
const tmp = tempDir();
beforeAll(async () => {
  sb = await sandbox();
});
afterAll(async () => {
  await sb.close();
  tmp.remove();
});
afterEach(() => sb.sandbox.faults.clear());

let n = 0;
const nextUser = () => `52155000${String(++n).padStart(5, '0')}`;
const smsTo = (user: string) =>
  sb.sandbox
    .messagesTo(user)
    .filter((m) => m.channel === 'sms')
    .map((m) => (m.channel === 'sms' ? m.text : ''));
const interactiveTo = (user: string) => sb.sandbox.messagesTo(user).filter((m) => m.channel === 'interactive');
const fallbacks = (w: World<Store>) => w.rows(`SELECT f.fallback_of AS original, o.state AS "originalState", f.channel, f.state FROM outbox f JOIN outbox o ON o.id = f.fallback_of ORDER BY f.id`);

describe.each(ENGINES)('on %s', (engine) => {
  describe('when it falls back', () => {
    it('a permanent refusal (131047) sends the SMS rendering once, recorded against the original', async () => {
      const user = nextUser();
      sb.sandbox.faults.refuseInteractive(user);
      const w = await world([orderBot], { engine, sb });
      await w.send(textEvent('hi'), user);
      expect(interactiveTo(user)).toEqual([]);
      const texts = smsTo(user);
      expect(texts).toHaveLength(1);
      expect(texts[0]).toContain('1. Margherita');
      expect(texts[0]).toContain('3. Order status');
      expect(await fallbacks(w)).toEqual([{ original: 1, originalState: 'failed', channel: 'sms', state: 'sent' }]);
      const original = await w.store.outbound(1);
      expect([original?.errorCode, original?.httpStatus]).toEqual(['131047', 400]);
      expect(w.runtime.metrics.value('colloquy_fallbacks_total', { bot: 'order', trigger: 'permanent' })).toBe(1);
      const t = await w.runtime.transcript({ botId: 'order', user });
      expect(t.map((e) => (e.direction === 'out' ? `${e.record.channel}:${e.record.state}${e.record.fallbackOf ? `:fallback-of-${e.record.fallbackOf}` : ''}` : 'in'))).toEqual([
        'in',
        'interactive:failed',
        'sms:sent:fallback-of-1',
      ]);
      await w.close();
    });

    it('retries exhausted: falls back once, even when the process restarts between the failure and the SMS', async () => {
      const user = nextUser();
      const path = await freshDatabase(engine, tmp.dir, 'exhausted.db');
      const clock = new ManualClock();
      sb.sandbox.faults.fail('messaging', { status: 503, times: 1000 });
      sb.sandbox.faults.fail('sms', { status: 500, times: 3 }); // the first SMS attempt fails too (the adapter tries 3 times)
      const a = await world([orderBot], { engine, sb, path, clock, sends: { maxAttempts: 2, baseDelayMs: 1000 } });
      await a.send(textEvent('hi'), user);
      clock.advance(5_000);
      await a.runtime.idle();
      expect(await fallbacks(a)).toEqual([{ original: 1, originalState: 'failed', channel: 'sms', state: 'pending' }]);
      await a.stop();
      sb.sandbox.faults.clear();
      clock.advance(60_000);
      const b = await world([orderBot], { engine, sb, path, clock });
      await b.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      expect(await fallbacks(b)).toEqual([{ original: 1, originalState: 'failed', channel: 'sms', state: 'sent' }]);
      expect(b.runtime.metrics.value('colloquy_fallbacks_total', { bot: 'order', trigger: 'retries-exhausted' })).toBe(0); // counted by the first process
      await b.stop();
    });

    it('a failed delivery status falls back once, however often it is delivered, across a restart', async () => {
      const user = nextUser();
      const path = await freshDatabase(engine, tmp.dir, 'status.db');
      const a = await world([orderBot], { engine, sb, path });
      await a.send(textEvent('hi'), user);
      const sent = await a.store.outbound(1);
      const failed = { providerMessageId: sent!.providerId!, status: 'failed', recipient: user, errors: [{ code: 131026, title: 'Message undeliverable' }] };
      await a.runtime.receiveStatus(failed);
      await a.runtime.receiveStatus(failed);
      await a.runtime.idle();
      await a.stop();
      const b = await world([orderBot], { engine, sb, path });
      await b.runtime.receiveStatus(failed);
      await b.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      expect(await fallbacks(b)).toEqual([{ original: 1, originalState: 'sent', channel: 'sms', state: 'sent' }]);
      await b.stop();
    });

    it('with fallback off, the bot gets delivery.failed and no SMS goes out', async () => {
      const user = nextUser();
      sb.sandbox.faults.refuseInteractive(user);
      const w = await world([{ ...variantsBot, options: { ...variantsBot.options, fallback: { enabled: false } } }], { engine, sb });
      await w.send(textEvent('hi'), user);
      expect(smsTo(user)).toEqual(['Sorry, a message could not be delivered.']); // the bot's own answer, a text (texts go by SMS)
      const inbox = await w.store.inbound(2);
      expect(inbox?.event).toMatchObject({ type: 'delivery.failed', channel: 'interactive', code: 131047 });
      await w.close();
    });

    it('a custom policy decides', async () => {
      const user = nextUser();
      sb.sandbox.faults.refuseInteractive(user, { code: 131026 });
      const seen: string[] = [];
      const bot = {
        ...orderBot,
        options: {
          ...orderBot.options,
          fallback: {
            shouldFallBack: (i: { trigger: string; code?: unknown }) => {
              seen.push(`${i.trigger}:${String(i.code)}`);
              return false;
            },
          },
        },
      };
      const w = await world([bot], { engine, sb });
      await w.send(textEvent('hi'), user);
      expect(seen).toEqual(['permanent:131026']);
      expect(smsTo(user)).toEqual([]);
      await w.close();
    });
  });

  describe('replies by SMS', () => {
    async function onSms(): Promise<{ w: World<Store>; user: string }> {
      const user = nextUser();
      sb.sandbox.faults.refuseInteractive(user);
      const w = await world([orderBot], { engine, sb });
      await w.send(textEvent('hi'), user);
      return { w, user };
    }
    const sms = (w: World<Store>, user: string, text: string) =>
      w.runtime.receive({ botId: 'order', user, providerId: `sms:${user}:${++n}`, source: 'sms', event: { type: 'text', text, via: 'sms' } }).then(() => w.runtime.idle());

    it('"2" takes the second choice, with via sms; later messages go by SMS too', async () => {
      const { w, user } = await onSms();
      await sms(w, user, '2');
      const conv = (await w.store.conversations())[0]!;
      expect(conv.state).toBe('size');
      expect((await w.store.inbound(2))?.event).toMatchObject({ type: 'text', text: '2' });
      const texts = smsTo(user);
      expect(texts).toHaveLength(2);
      expect(texts[1]).toContain('Which size of pepperoni?');
      expect(texts[1]).toContain('1. Small');
      expect(conv.channel).toBe('sms');
      await w.close();
    });

    it('"2." and a typed title (any case, accents, spaces) do the same; "hello" is text', async () => {
      const { w, user } = await onSms();
      await sms(w, user, ' pépperoni ');
      expect((await w.store.conversations())[0]!.state).toBe('size');
      await sms(w, user, 'hello');
      expect((await w.store.conversations())[0]!.state).toBe('size'); // text is not handled in size: the prompt again, by SMS
      await sms(w, user, '2.');
      expect((await w.store.conversations())[0]!.state).toBe('address');
      await w.close();
    });

    it('writing on WhatsApp again brings the conversation back to the interactive channel', async () => {
      const { w, user } = await onSms();
      sb.sandbox.faults.allowInteractive(user);
      await w.send(reply('margherita', 'Margherita', 'list'), user);
      const conv = (await w.store.conversations())[0]!;
      expect([conv.state, conv.channel]).toEqual(['size', 'interactive']);
      expect(interactiveTo(user)).toHaveLength(1);
      await w.close();
    });
  });

  describe('SMS results', () => {
    it('code 15 (insufficient credit) reaches the bot as delivery.failed with the channel, code and hint', async () => {
      const user = nextUser();
      sb.sandbox.faults.smsError(15, { times: 1, hint: 'Top up your balance' });
      const w = await world([{ ...variantsBot, options: { ...variantsBot.options, fallback: { enabled: false } } }], { engine, sb });
      await w.send(textEvent('hi'), user);
      await w.send(reply('1', 'One', 'list'), user);
      await w.send(reply('next'), user);
      await w.send(reply('next'), user);
      await w.send(reply('next'), user);
      const conv = (await w.store.conversations())[0]!;
      await w.send({ type: 'flow', token: conv.flowToken, data: {} }, user); // → texts: a text and an SMS
      const failed = await w.rows(`SELECT event FROM inbox WHERE provider_id LIKE 'delivery:%'`);
      expect(failed.map((r) => (typeof r['event'] === 'string' ? JSON.parse(r['event']) : r['event']))).toEqual([
        expect.objectContaining({ type: 'delivery.failed', channel: 'sms', code: 15, hint: 'Top up your balance' }),
      ]);
      const [row] = await w.rows(`SELECT state, sms_code, error_code FROM outbox WHERE channel = 'sms' ORDER BY id LIMIT 1`);
      expect(row).toEqual({ state: 'failed', sms_code: 15, error_code: '15' });
      await w.close();
    });

    it('code 19 is retried and then sent, with code, mailingId and result recorded', async () => {
      const user = nextUser();
      sb.sandbox.faults.smsError(19, { times: 1 });
      sb.sandbox.faults.refuseInteractive(user);
      const w = await world([orderBot], { engine, sb });
      await w.send(textEvent('hi'), user);
      const [row = {}] = await w.rows(`SELECT state, sms_code, sms_mailing_id, sms_result FROM outbox WHERE channel = 'sms'`);
      expect(row).toMatchObject({ state: 'sent', sms_code: 0, sms_result: 'Applied' });
      expect(String(row['sms_mailing_id'])).toMatch(/^\d+$/);
      expect(smsTo(user)).toHaveLength(1);
      await w.close();
    });
  });

  describe('rendering', () => {
    it('the fallback text is the deterministic rendering of the message (or its own sms text)', async () => {
      const user = nextUser();
      sb.sandbox.faults.refuseInteractive(user);
      const w = await world([orderBot], { engine, sb });
      await w.send(textEvent('hi'), user);
      const original = (await w.store.outbound(1))!.message as Message;
      expect(smsTo(user)).toEqual([renderSms(original)]);
      await w.close();
    });
  });

  describe('recovery on start', () => {
    it('a failed status whose fallback a crash cut short gets it when the next process starts', async () => {
      const user = nextUser();
      const path = await freshDatabase(engine, tmp.dir, 'recover.db');
      const a = await world([orderBot], { engine, sb, path });
      await a.send(textEvent('hi'), user);
      const sent = (await a.store.outbound(1))!;
      // The crash: the status is stored (the provider got its 200), the follow-up never ran.
      await a.store.addStatus({ providerMessageId: sent.providerId!, status: 'failed', errors: [{ code: 131026, title: 'Message undeliverable' }], receivedAt: a.clock.now() });
      await a.stop();
      expect(smsTo(user)).toEqual([]);
      const b = await world([orderBot], { engine, sb, path });
      await b.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      expect(await fallbacks(b)).toEqual([{ original: 1, originalState: 'sent', channel: 'sms', state: 'sent' }]);
      await b.stop();
      const c = await world([orderBot], { engine, sb, path }); // and only once
      await c.runtime.idle();
      expect(smsTo(user)).toHaveLength(1);
      await c.stop();
    });
  });
});
