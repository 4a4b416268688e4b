import { afterEach, describe, expect, it } from 'vitest';
import { InteractiveRequestSchema, SmsRequestSchema } from '../../src/messages/index.js';
import orderBot, { lookups } from '../fixtures/order-bot.js';
import variantsBot, { variants } from '../fixtures/variants-bot.js';
import counterBot from '../fixtures/counter-bot.js';
import type { Store } from '../../src/store/types.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';
import { ENGINES, freshDatabase, reply, textEvent, USER, world, type World } from './helpers.js';

let w: World<Store> | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const messagesTo = (w: World<Store>, user = USER) => w.sb.sandbox.messagesTo(user);

describe.each(ENGINES)('the runtime on %s', (engine) => {
  describe('every message variant', () => {
    it('reaches the sandbox in the seed shape, from the state that emitted it', async () => {
      w = await world([variantsBot], { engine });
      await w.send(textEvent('hi'));
      await w.send(reply('1', 'One', 'list'));
      await w.send(reply('next'));
      await w.send(reply('next'));
      await w.send(reply('next'));
      const conv = (await w.store.conversations())[0]!;
      await w.send({ type: 'flow', token: conv.flowToken, data: { ok: true } });
      const got = messagesTo(w);
      expect(got.map((m) => m.channel)).toEqual(['interactive', 'interactive', 'interactive', 'interactive', 'interactive', 'sms', 'sms']);
      const reqs = got.map((m) => m.request as Record<string, unknown>);
      for (const r of reqs.slice(0, 5)) expect(InteractiveRequestSchema.safeParse(r).success).toBe(true);
      for (const r of reqs.slice(5)) expect(SmsRequestSchema.safeParse(r).success).toBe(true);
      expect(reqs[0]).toEqual({ from: '15550000002', to: USER, type: 'contacts', listMessages: variants.list.listMessages });
      expect(reqs[1]).toEqual({ from: '15550000002', to: USER, type: 'interactive', replyButtons: variants.image.replyButtons });
      expect((reqs[2]!['replyButtons'] as Record<string, unknown>)['headerVideo']).toEqual({ link: 'https://example.com/a.mp4' });
      expect((reqs[3]!['replyButtons'] as Record<string, unknown>)['headerDocument']).toEqual({ link: 'https://example.com/menu.pdf', fileName: 'menu.pdf' });
      const params = (reqs[4]!['flow'] as { action: { parameters: Record<string, unknown> } }).action.parameters;
      expect(params).toMatchObject({
        mode: 'draft',
        flow_message_version: '3',
        flow_id: '998877',
        flow_token: conv.flowToken,
        flow_cta: 'Open form',
        flow_action: 'navigate',
        flow_action_payload: { screen: 'FORM', data: { product_name: 'Pizza', product_description: 'Large', product_price: 12 } },
      });
      expect(reqs[5]).toEqual({ msisdns: [USER], message: 'Plain text', tag: 'variants' });
      expect(reqs[6]).toEqual({ msisdns: [USER], message: 'An SMS on purpose', tag: 'variants' });
      const sent = (await w.runtime.transcript(conv.id)).filter((e) => e.direction === 'out');
      expect(sent.every((e) => e.direction === 'out' && e.record.state === 'sent' && e.record.providerId)).toBe(true);
      const smsRow = sent.at(-1)!;
      expect(smsRow.direction === 'out' && [smsRow.record.smsCode, smsRow.record.smsResult]).toEqual([0, 'Applied']);
      expect(smsRow.direction === 'out' && smsRow.record.smsMailingId).toMatch(/^\d+$/);
    });
  });

  describe('replies and routing', () => {
    it('a list row and a button drive their transitions; a stale tap re-sends the prompt', async () => {
      w = await world([orderBot], { engine });
      await w.send(textEvent('hi'));
      await w.send(reply('pepperoni', 'Pepperoni', 'list'));
      let conv = (await w.store.conversations())[0]!;
      expect(conv.state).toBe('size');
      await w.send(reply('margherita', 'Margherita', 'list')); // a row of the older list
      conv = (await w.store.conversations())[0]!;
      expect(conv.state).toBe('size');
      const kinds = messagesTo(w).map((m) => (m.channel === 'interactive' ? Object.keys(m.request).find((k) => k !== 'from' && k !== 'to' && k !== 'type') : 'sms'));
      expect(kinds).toEqual(['listMessages', 'replyButtons', 'replyButtons']);
      await w.send(reply('large', 'Large'));
      expect((await w.store.conversations())[0]!.state).toBe('address');
    });

    it('a flow answer reaches the conversation its token belongs to; a wrong token re-prompts', async () => {
      w = await world([orderBot], { engine });
      for (const u of ['5215500000001', '5215500000002']) {
        await w.send(textEvent('hi'), u);
        await w.send(reply('margherita', 'Margherita', 'list'), u);
        await w.send(reply('small', 'Small'), u);
      }
      const [a, b] = await w.store.conversations();
      await w.send({ type: 'flow', token: b!.flowToken, data: { address: 'wrong' } }, a!.user);
      expect((await w.store.conversation(a!.id))!.state).toBe('address');
      await w.send({ type: 'flow', token: a!.flowToken, data: { address: '1 Main St' } }, a!.user);
      const done = (await w.store.conversation(a!.id))!;
      expect([done.status, (done.snapshot as { context: { address: string } }).context.address]).toEqual(['done', '1 Main St']);
      expect((await w.store.conversation(b!.id))!.state).toBe('address');
    });
  });

  describe('exactly once', () => {
    it('the same inbound delivered 5 times concurrently is one turn and one reply', async () => {
      w = await world([counterBot], { engine });
      const inbound = { botId: 'counter', user: USER, providerId: 'wamid.same', source: 'whatsapp' as const, event: textEvent('once') };
      const results = await Promise.all(Array.from({ length: 5 }, () => w!.runtime.receive(inbound)));
      await w.runtime.idle();
      expect(results.filter((r) => !r.duplicate)).toHaveLength(1);
      expect(new Set(results.map((r) => r.inboxId)).size).toBe(1);
      expect(messagesTo(w).map((m) => m.channel === 'sms' && m.text)).toEqual(['#1']);
      expect((await w.store.conversations())[0]!.version).toBe(1);
    });

    it('100 replies at once are processed one at a time, in order, losing no update', async () => {
      w = await world([counterBot], { engine });
      const texts = Array.from({ length: 100 }, (_, i) => `m${i}`);
      const receipts = await Promise.all(texts.map((t, i) => w!.runtime.receive({ botId: 'counter', user: USER, providerId: `wamid.burst${i}`, source: 'whatsapp', event: textEvent(t) })));
      await w.runtime.idle();
      const conv = (await w.store.conversations())[0]!;
      const ctx = (conv.snapshot as { context: { count: number; seen: string[] } }).context;
      const arrival = receipts
        .map((r, i) => [r.inboxId, texts[i]!] as const)
        .sort((x, y) => x[0] - y[0])
        .map(([, t]) => t);
      expect(ctx.count).toBe(100);
      expect(ctx.seen).toEqual(arrival);
      expect(conv.version).toBe(100);
      expect(messagesTo(w).map((m) => m.channel === 'sms' && m.text)).toEqual(texts.map((_, i) => `#${i + 1}`));
    });
  });

  describe('durable timers', () => {
    it('an after delay fires through the inbox at its time, and is dropped when its state is left', async () => {
      w = await world([orderBot], { engine });
      await w.send(textEvent('hi'));
      await w.send(reply('margherita', 'Margherita', 'list'));
      const conv = (await w.store.conversations())[0]!;
      expect(await w.store.timers(conv.id)).toEqual([
        { key: 'xstate.after.600000.order.size', stateNode: 'order.size', event: { type: 'xstate.after.600000.order.size' }, fireAt: w.clock.now() + 600_000 },
      ]);
      w.clock.advance(599_999);
      await w.runtime.poke();
      await w.runtime.idle();
      expect((await w.store.conversation(conv.id))!.state).toBe('size');
      w.clock.advance(1);
      await w.runtime.idle();
      expect((await w.store.conversation(conv.id))!.state).toBe('menu');
      expect(
        messagesTo(w)
          .slice(-2)
          .map((m) => m.channel),
      ).toEqual(['sms', 'interactive']);
      expect(await w.store.timers(conv.id)).toEqual([]);
      await w.send(reply('margherita', 'Margherita', 'list'));
      await w.send(reply('small', 'Small'));
      expect(await w.store.timers(conv.id)).toEqual([]);
    });
  });

  describe('async work', () => {
    it('an invoked promise settles after the turn and its result is committed and sent', async () => {
      w = await world([orderBot], { engine });
      lookups.length = 0;
      await w.send(textEvent('hi'));
      await w.send(reply('status', 'Order status', 'list'));
      await eventually(async () => expect((await w!.store.conversations())[0]!.state).toBe('menu'));
      await w.runtime.idle();
      const conv = (await w.store.conversations())[0]!;
      expect(conv.state).toBe('menu');
      expect(lookups).toEqual([USER]);
      expect(
        messagesTo(w)
          .slice(-2)
          .map((m) => (m.channel === 'sms' ? m.text : m.request.type)),
      ).toEqual([`order for ${USER} is on its way`, 'contacts']);
    });
  });

  describe('lifecycle', () => {
    it('a final state ends the conversation and the next message starts a new one', async () => {
      w = await world([orderBot], { engine });
      await w.send(textEvent('hi'));
      await w.send(reply('margherita', 'Margherita', 'list'));
      await w.send(reply('small', 'Small'));
      await w.send(textEvent('1 Main St'));
      expect((await w.store.conversations()).map((c) => c.status)).toEqual(['done']);
      await w.send(textEvent('hello again'));
      const convs = await w.store.conversations();
      expect(convs.map((c) => [c.status, c.state])).toEqual([
        ['done', 'done'],
        ['active', 'menu'],
      ]);
      expect(convs[0]!.flowToken).not.toBe(convs[1]!.flowToken);
    });

    it('an idle conversation expires and the next message starts over', async () => {
      w = await world([orderBot], { engine });
      await w.send(textEvent('hi'));
      await w.send(reply('margherita', 'Margherita', 'list'));
      w.clock.advance(24 * 60 * 60 * 1000);
      await w.runtime.idle();
      await w.send(reply('small', 'Small'));
      const convs = await w.store.conversations();
      expect(convs.map((c) => [c.status, c.state])).toEqual([
        ['expired', 'menu'],
        ['active', 'menu'],
      ]);
    });

    it('the transcript holds both directions in order with delivery results', async () => {
      w = await world([orderBot], { engine });
      await w.send(textEvent('hi'));
      await w.send(reply('margherita', 'Margherita', 'list'));
      const t = await w.runtime.transcript({ botId: 'order', user: USER });
      expect(t.map((e) => (e.direction === 'in' ? `in:${(e.event as { type: string }).type}` : `out:${e.record.kind}:${e.record.state}`))).toEqual([
        'in:text',
        'out:list:sent',
        'in:reply.margherita',
        'out:buttons:sent',
      ]);
    });
  });

  describe('delivery failures', () => {
    it('a permanent failure reaches the bot as delivery.failed', async () => {
      w = await world([{ ...variantsBot, options: { ...variantsBot.options, fallback: { enabled: false } } }], { engine });
      w.sb.sandbox.faults.fail('messaging', { status: 400, times: 1 });
      await w.send(textEvent('hi'));
      await w.runtime.idle();
      const conv = (await w.store.conversations())[0]!;
      expect(conv.state).toBe('failed');
      expect((conv.snapshot as { context: { failures: number } }).context.failures).toBe(1);
      const inbox = await w.store.inbound(2);
      expect(inbox?.event).toMatchObject({ type: 'delivery.failed', channel: 'interactive' });
    });
  });

  describe('bad messages', () => {
    it('a message that breaks a limit fails its turn with an error naming bot, state and field', async () => {
      const { setup } = await import('xstate');
      const { defineBot, say, buttons } = await import('../../src/index.js');
      const bad = defineBot({
        id: 'bad',
        machine: setup({}).createMachine({ id: 'bad', initial: 'ask', states: { ask: { entry: say(() => buttons({ body: 'Pick', buttons: [{ id: 'x', title: 'A title of 21 chars!!' }] })) } } }),
      });
      w = await world([bad], { engine });
      await w.send(textEvent('hi'), USER, 'bad');
      const row = await w.store.inbound(1);
      expect(row?.state).toBe('failed');
      expect(row?.error).toContain('bot "bad"');
      expect(row?.error).toContain('state "ask"');
      expect(row?.error).toContain('replyButtons.buttons[0].title: must be at most 20 characters (has 21)');
      expect(await w.store.conversations()).toEqual([]);
      expect(messagesTo(w)).toEqual([]);
    });
  });

  describe('two processes on one database', () => {
    it('lose no update: every turn runs once, the versions line up', async () => {
      const tmp = tempDir();
      const path = await freshDatabase(engine, tmp.dir, 'shared.db');
      w = await world([counterBot], { engine, path });
      const other = await world([counterBot], { engine, path, sb: w.sb });
      const sends = Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? other : w!).runtime.receive({ botId: 'counter', user: USER, providerId: `wamid.two${i}`, source: 'whatsapp', event: textEvent(`t${i}`) }),
      );
      await Promise.all(sends);
      await Promise.all([w.runtime.idle(), other.runtime.idle()]);
      const conv = (await w.store.conversations())[0]!;
      const ctx = (conv.snapshot as { context: { count: number; seen: string[] } }).context;
      expect(ctx.count).toBe(40);
      expect(new Set(ctx.seen).size).toBe(40);
      expect(conv.version).toBe(40);
      expect(messagesTo(w)).toHaveLength(40);
      await other.stop();
      tmp.remove();
    });
  });

  describe('conversations your backend starts', () => {
    it('an api event starts a conversation (the initial prompt goes out) and is delivered when handled', async () => {
      w = await world([orderBot], { engine });
      await w.runtime.receive({ botId: 'order', user: USER, source: 'api', event: { type: 'reply.status', id: 'status', title: 'Order status', via: 'button' } });
      await eventually(async () => expect((await w!.store.conversations())[0]?.state).toBe('menu'));
      await w.runtime.idle();
      const conv = (await w.store.conversations())[0]!;
      expect(conv.state).toBe('menu');
      expect(messagesTo(w).map((m) => (m.channel === 'sms' ? m.text : m.request.type))).toEqual(['contacts', `order for ${USER} is on its way`, 'contacts']);
      await w.runtime.receive({ botId: 'order', user: USER, source: 'api', event: { type: 'nudge' } }); // not handled: no re-prompt
      await w.runtime.idle();
      expect(messagesTo(w)).toHaveLength(3);
    });
  });
});
