import { createActor, setup } from 'xstate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/conversation/clock.js';
import { defineBot, say, text, type Message } from '../../src/index.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import orderBot, { holdLookups, lookups, releaseLookup, machine as orderMachine } from '../fixtures/order-bot.js';
import { ENGINES, freshDatabase, reply, sandbox, textEvent, world } from './helpers.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';

const tmp = tempDir();
afterAll(() => tmp.remove());
let n = 0;

describe.each(ENGINES)('restarts on %s', (engine) => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await sandbox();
  });
  afterAll(async () => {
    await sb.close();
  });
  const dbPath = () => freshDatabase(engine, tmp.dir, `restart-${++n}.db`);

  describe('timers across a restart', () => {
    it('a delay armed before a restart fires after it', async () => {
      const path = await dbPath();
      const clock = new ManualClock();
      const a = await world([orderBot], { engine, path, sb, clock });
      await a.send(textEvent('hi'));
      await a.send(reply('margherita', 'Margherita', 'list'));
      await a.stop();
      clock.advance(300_000);
      const b = await world([orderBot], { engine, path, sb, clock });
      expect((await b.store.conversations())[0]!.state).toBe('size');
      clock.advance(300_000);
      await b.runtime.idle();
      expect((await b.store.conversations())[0]!.state).toBe('menu');
      await b.stop();
    });

    it('a delay that fell due while the process was down fires on start', async () => {
      const path = await dbPath();
      const clock = new ManualClock();
      const a = await world([orderBot], { engine, path, sb, clock });
      await a.send(textEvent('hi'), '5215500000077');
      await a.send(reply('margherita', 'Margherita', 'list'), '5215500000077');
      await a.stop();
      clock.advance(3_600_000);
      const b = await world([orderBot], { engine, path, sb, clock });
      const conv = (await b.store.conversations())[0]!;
      expect(conv.state).toBe('menu');
      const t = await b.runtime.transcript(conv.id);
      expect(t.filter((e) => e.direction === 'in').map((e) => e.direction === 'in' && e.source)).toEqual(['whatsapp', 'whatsapp', 'timer']);
      await b.stop();
    });
  });

  describe('rehydration', () => {
    it('a conversation restored from the store at every step continues exactly like one kept in memory', async () => {
      const events = [textEvent('hi'), reply('pepperoni', 'Pepperoni', 'list'), reply('nope'), reply('large', 'Large')];
      // In memory: one XState actor, never persisted.
      const memory = createActor(orderMachine, { input: { user: '5215500000088' } });
      const said: Message[] = [];
      memory.on('colloquy.say', (e) => {
        said.push(...(e as unknown as { messages: Message[] }).messages);
      });
      memory.start();
      for (const e of events.slice(1)) memory.send(e as never);
      // Through the store, a new runtime (and a JSON round-trip) before every event.
      const path = await dbPath();
      for (const e of events) {
        const w = await world([orderBot], { engine, path, sb });
        await w.send(e, '5215500000088');
        await w.stop();
      }
      const w = await world([orderBot], { engine, path, sb });
      const conv = (await w.store.conversations())[0]!;
      const sent = (await w.runtime.transcript(conv.id)).flatMap((e) => (e.direction === 'out' ? [e.record.message] : []));
      await w.stop();
      expect(conv.snapshot).toEqual(JSON.parse(JSON.stringify(memory.getPersistedSnapshot())));
      // The stale tap re-prompts (the runtime's addition); everything else is the machine's own output.
      expect(sent.filter((_, i) => i !== 2)).toEqual(JSON.parse(JSON.stringify(said)));
      memory.stop();
    });
  });

  describe('changed bots', () => {
    it('a stored snapshot whose state was removed restarts cleanly from the initial state', async () => {
      const path = await dbPath();
      const v1 = defineBot({
        id: 'evolving',
        machine: setup({}).createMachine({ id: 'e', initial: 'a', states: { a: { entry: say(text('in a')), on: { text: 'b' } }, b: { entry: say(text('in b')), on: { text: 'a' } } } }),
      });
      const v2 = defineBot({
        id: 'evolving',
        machine: setup({}).createMachine({ id: 'e', initial: 'a', states: { a: { entry: say(text('in new a')), on: { text: 'c' } }, c: { entry: say(text('in c')) } } }),
      });
      const a = await world([v1], { engine, path, sb });
      await a.send(textEvent('hi'), '5215500000099'); // a new conversation: a's prompt, then "hi" takes it to b
      expect((await a.store.conversations())[0]!.state).toBe('b');
      await a.stop();
      const b = await world([v2], { engine, path, sb });
      await b.send(textEvent('again'), '5215500000099'); // b is gone: restart at a, whose text transition takes "again" to c
      const conv = (await b.store.conversations())[0]!;
      expect([conv.status, conv.state]).toEqual(['active', 'c']);
      const texts = sb.sandbox.messagesTo('5215500000099').map((m) => m.channel === 'sms' && m.text);
      expect(texts).toEqual(['in a', 'in b', 'in new a', 'in c']);
      await b.stop();
    });
  });

  describe('async work across a restart', () => {
    it('an invocation running at shutdown runs again on start and the conversation goes on', async () => {
      const path = await dbPath();
      lookups.length = 0;
      holdLookups();
      const a = await world([orderBot], { engine, path, sb });
      await a.send(textEvent('hi'), '5215500000055');
      await a.send(reply('status', 'Order status', 'list'), '5215500000055');
      expect((await a.store.conversations())[0]!.state).toBe('checking');
      await a.stop(); // the lookup is still held: its result is lost with the process
      releaseLookup();
      const b = await world([orderBot], { engine, path, sb });
      await eventually(async () => expect((await b.store.conversations())[0]!.state).toBe('menu'));
      await b.runtime.idle();
      expect(lookups).toEqual(['5215500000055', '5215500000055']);
      expect((await b.store.conversations())[0]!.state).toBe('menu');
      const last = sb.sandbox.messagesTo('5215500000055').filter((m) => m.channel === 'sms');
      expect(last.map((m) => m.channel === 'sms' && m.text)).toEqual(['order for 5215500000055 is on its way']);
      await b.stop();
    });
  });
});
