import { fileURLToPath } from 'node:url';
import { assign, fromPromise, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { checkCommand, formatFinding } from '../../src/cli/check.js';
import type { Io } from '../../src/cli/io.js';
import { buttons, defineBot, flow, list, say, text, type ColloquyEvent, type Message } from '../../src/index.js';
import { checkBot, type Finding } from '../../src/simulator/check.js';
import { walkBot } from '../../src/simulator/walk.js';
import broken from '../fixtures/check/broken-bot.js';
import nested, { machine as nestedMachine } from '../fixtures/check/nested-bot.js';
import counter from '../fixtures/counter-bot.js';
import order from '../fixtures/order-bot.js';
import variants from '../fixtures/variants-bot.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

function fakeIo(json = false): Io & { stdout: () => string; stderr: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return { out: (t) => out.push(t), err: (t) => err.push(t), env: {}, json, stdout: () => out.join(''), stderr: () => err.join('') };
}

const bot = (id: string, machine: Parameters<typeof defineBot>[0]['machine']) => defineBot({ id, machine });
const m = setup({ types: { events: {} as ColloquyEvent } });
const yesNo = buttons({
  body: 'Sure?',
  buttons: [
    { id: 'yes', title: 'Yes' },
    { id: 'no', title: 'No' },
  ],
});

describe('checkBot', () => {
  it('reports exactly the broken bot’s five problems, in state order', () => {
    expect(checkBot(broken)).toEqual<Finding[]>([
      { bot: 'broken', state: 'start', kind: 'dangling-choice', id: 'help', message: 'button "Help" has no reply.help transition' },
      { bot: 'broken', state: 'extras', kind: 'invalid-message', message: 'replyButtons.buttons[0].title: must be at most 20 characters (has 21)' },
      { bot: 'broken', state: 'address', kind: 'flow-without-handler', message: 'flow 424242 is sent but no "flow" transition receives its answers' },
      { bot: 'broken', state: 'waiting', kind: 'dead-end', message: 'the state can never be left: no transition, after, invoke onDone/onError or done state leads out' },
      { bot: 'broken', state: 'secret', kind: 'unreachable-state', message: 'no transition leads to this state' },
    ]);
  });

  it('passes the order and variants bots clean', () => {
    expect(checkBot(order)).toEqual([]);
    expect(checkBot(variants)).toEqual([]);
  });

  it('passes the nested bot clean: wildcards, ancestor handlers, guards, delays, transient states', () => {
    expect(checkBot(nested)).toEqual([]);
  });

  it('takes guarded branches and lays the sample context over the initial context', () => {
    const walk = walkBot(nested);
    expect([...walk.reached].sort()).toEqual(['bye', 'greet', 'shop', 'shop.confirm', 'shop.paid', 'shop.pick', 'shop.qty', 'sorry']);
    const withoutSample = defineBot({ id: 'nested', machine: nestedMachine });
    expect(checkBot(withoutSample)).toEqual([{ bot: 'nested', state: 'greet', kind: 'invalid-message', message: 'replyButtons.body: must not be empty' }]);
  });

  it('reports a single state that only loops to itself as a dead end', () => {
    expect(checkBot(counter)).toEqual([{ bot: 'counter', state: 'counting', kind: 'dead-end', message: 'the state can never be left: its transitions all stay in it' }]);
  });

  it('counts a wildcard handler and an ancestor’s handler for a choice', () => {
    const machine = m.createMachine({
      initial: 'a',
      on: { 'reply.no': '.b' },
      states: { a: { entry: say(yesNo), on: { '*': 'b' } }, b: { entry: say(yesNo), on: { 'reply.yes': 'a' } } },
    });
    expect(checkBot(bot('wild', machine))).toEqual([]);
  });

  it('names nested states by their dotted path and checks what a transition says where it lands', () => {
    const machine = m.createMachine({
      initial: 'outer',
      states: {
        outer: {
          initial: 'inner',
          states: { inner: { on: { text: { target: 'next', actions: say(yesNo) } } }, next: { on: { 'reply.yes': '#done' } } },
        },
        done: { id: 'done', type: 'final' },
      },
    });
    expect(checkBot(bot('nest', machine))).toEqual([{ bot: 'nest', state: 'outer.next', kind: 'dangling-choice', id: 'no', message: 'button "No" has no reply.no transition' }]);
  });

  it('names the state a message lands in when an entry said it on the way through', () => {
    const machine = m.createMachine({
      initial: 'pass',
      states: { pass: { entry: say(yesNo), always: 'wait' }, wait: { on: { 'reply.yes': 'pass', 'reply.no': 'pass' } }, idle: {} },
    });
    const findings = checkBot(bot('pass', machine));
    expect(findings.map((f) => [f.state, f.kind, f.id, f.message])).toEqual([['idle', 'unreachable-state', undefined, 'no transition leads to this state']]);
    const transient = m.createMachine({ initial: 'pass', states: { pass: { entry: say(yesNo), always: 'wait' }, wait: { on: { 'reply.yes': 'pass' } } } });
    expect(checkBot(bot('pass', transient))[0]).toMatchObject({ state: 'pass', id: 'no', message: 'button "No" has no reply.no transition in wait' });
  });

  it('reports hand-made messages the runtime would reject, and builders that throw something else', () => {
    const handMade = { kind: 'buttons', replyButtons: { body: 'x', buttons: [] } } as unknown as Message;
    const machine = m.createMachine({
      initial: 'a',
      states: {
        a: { entry: say(handMade), on: { text: 'b' } },
        b: {
          entry: say((): Message => {
            throw new TypeError('oops');
          }),
          on: { text: 'a' },
        },
      },
    });
    const findings = checkBot(bot('hand', machine));
    expect(findings.map((f) => [f.state, f.kind])).toEqual([
      ['a', 'invalid-message'],
      ['b', 'invalid-message'],
    ]);
    expect(findings[0]?.message).toMatch(/^replyButtons\.buttons: /);
    expect(findings[1]?.message).toBe('the message could not be built: oops');
  });

  it('judges a parallel state as a whole and names its active regions', () => {
    const machine = m.createMachine({
      initial: 'both',
      states: {
        both: {
          type: 'parallel',
          on: { text: 'end' },
          states: { left: { initial: 'l', states: { l: { entry: say(list({ body: 'Pick', button: 'Open', rows: [{ id: 'x', title: 'X' }] })) } } }, right: { initial: 'r', states: { r: {} } } },
        },
        end: { type: 'final', entry: say(flow({ body: 'Form', flowId: '1', cta: 'Open', screen: 'S' })) },
      },
    });
    expect(checkBot(bot('par', machine)).map((f) => [f.state, f.kind, f.id])).toEqual([
      ['both.left.l', 'dangling-choice', 'x'],
      ['end', 'flow-without-handler', undefined],
    ]);
  });

  it('does not call a state unreachable when its only way in throws on a sample payload', () => {
    const machine = setup({ types: { context: {} as { address?: string }, events: {} as ColloquyEvent } }).createMachine({
      context: {},
      initial: 'a',
      states: {
        a: { entry: say(text('Where to?')), on: { flow: { target: 'b', actions: assign({ address: ({ event }) => (event.data['address'] as string).trim() }) } } },
        b: { type: 'final' },
      },
    });
    expect(checkBot(bot('strict', machine))).toEqual([]);
    expect(walkBot(bot('strict', machine)).reached.has('b')).toBe(false);
  });

  it('does not blame a message on a guessed actor output, but reports one that is wrong whatever the output', () => {
    type Slot = { id: string; label: string };
    const machine = setup({
      types: { context: {} as { slots: Slot[] }, events: {} as ColloquyEvent },
      actors: { find: fromPromise(async (): Promise<Slot[]> => [{ id: 'a', label: 'A' }]) },
    }).createMachine({
      context: { slots: [] },
      initial: 'loading',
      states: {
        loading: { invoke: { src: 'find', onDone: { target: 'pick', actions: assign({ slots: ({ event }) => event.output }) }, onError: 'failed' } },
        pick: { entry: say(({ context }) => buttons({ body: 'Pick', buttons: context.slots.map((x) => ({ id: 'slot', title: x.label })) })), on: { 'reply.slot': 'done' } },
        failed: { type: 'final', entry: say(() => text('x'.repeat(5000))) },
        done: { type: 'final' },
      },
    });
    const findings = checkBot(bot('slots', machine));
    expect(findings.map((f) => [f.state, f.kind])).toEqual([['failed', 'invalid-message']]);
    expect(findings[0]?.message).toMatch(/^text: must be at most \d+ characters \(has 5000\)$/);
  });

  it('reports a state whose only transitions re-enter it', () => {
    const machine = m.createMachine({
      initial: 'a',
      states: { a: { on: { text: { target: 'a', reenter: true, actions: say(text('again')) } } } },
    });
    expect(checkBot(bot('loop', machine))).toEqual([{ bot: 'loop', state: 'a', kind: 'dead-end', message: 'the state can never be left: its transitions all stay in it' }]);
  });
});

describe('colloquy check', () => {
  it('prints each finding and a summary, and exits 1', async () => {
    const io = fakeIo();
    expect(await checkCommand([fixture('check/broken-bot.ts')], io)).toBe(1);
    const lines = io.stdout().trimEnd().split('\n');
    expect(lines).toEqual([
      'broken › start › dangling-choice (help): button "Help" has no reply.help transition',
      'broken › extras › invalid-message: replyButtons.buttons[0].title: must be at most 20 characters (has 21)',
      'broken › address › flow-without-handler: flow 424242 is sent but no "flow" transition receives its answers',
      'broken › waiting › dead-end: the state can never be left: no transition, after, invoke onDone/onError or done state leads out',
      'broken › secret › unreachable-state: no transition leads to this state',
      '1 bot checked: 5 findings in 1 bot.',
    ]);
    expect(io.stderr()).toBe('');
  });

  it('exits 0 for clean bots', async () => {
    const io = fakeIo();
    expect(await checkCommand([fixture('order-bot.ts'), fixture('variants-bot.ts')], io)).toBe(0);
    expect(io.stdout()).toBe('2 bots checked: no findings.\n');
  });

  it('checks every bot in a folder', async () => {
    const io = fakeIo();
    expect(await checkCommand([fixture('check')], io)).toBe(1);
    expect(io.stdout()).toContain('2 bots checked: 5 findings in 1 bot.');
  });

  it('prints JSON with --json', async () => {
    const io = fakeIo(true);
    expect(await checkCommand([fixture('check/broken-bot.ts'), fixture('order-bot.ts')], io)).toBe(1);
    const out = JSON.parse(io.stdout()) as { bots: string[]; findings: Finding[] };
    expect(out.bots).toEqual(['broken', 'order']);
    expect(out.findings).toEqual(checkBot(broken));
  });

  it('formats a finding without an id', () => {
    expect(formatFinding({ bot: 'b', state: 'order.size', kind: 'dead-end', message: 'stuck' })).toBe('b › order.size › dead-end: stuck');
  });

  it('turns a bad bot path into one clear message and exit code 1', async () => {
    const io = fakeIo();
    expect(await main(['check', fixture('check/no-such-bot.ts')], io)).toBe(1);
    expect(io.stderr()).toMatch(/^colloquy check: bots: no such file or folder: .*no-such-bot\.ts\n$/);
    expect(io.stdout()).toBe('');
  });

  it('runs from the command line', async () => {
    const io = fakeIo();
    expect(await main(['check', fixture('order-bot.ts')], io)).toBe(0);
    expect(io.stdout()).toBe('1 bot checked: no findings.\n');
  });
});
