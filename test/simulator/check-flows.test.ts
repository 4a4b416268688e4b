/**
 * `colloquy check` on live flows (`flow_action: "data_exchange"`): a flow sent where no declaration
 * answers its screens, a declaration for another flow, screens described but not answered (and the
 * reverse, a warning), and a declaration no live flow uses (a warning); directly and through the CLI.
 */
import { fileURLToPath } from 'node:url';
import { setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { checkCommand } from '../../src/cli/check.js';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { defineBot, flow, flowComplete, flowScreen, say, type ColloquyEvent, type FlowScreens } from '../../src/index.js';
import { checkBot, type Finding } from '../../src/simulator/check.js';
import live from '../fixtures/check-flows/live-bot.js';
import warned from '../fixtures/check-flows/warned-bot.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/check-flows/${name}`, import.meta.url));

function fakeIo(json = false): Io & { stdout: () => string; stderr: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return { out: (t) => out.push(t), err: (t) => err.push(t), env: {}, json, stdout: () => out.join(''), stderr: () => err.join('') };
}

type Ev = ColloquyEvent | { type: 'book' };
const liveFlow = (flowId = '777') => flow({ body: 'Pick a time', flowId, cta: 'See times', action: 'data_exchange' });
const book = { event: () => ({ type: 'book' as const }), answer: () => flowComplete({}) };
const answers = (over: Partial<FlowScreens> = {}): FlowScreens => ({ open: () => flowScreen('DAYS'), screens: { DAYS: book }, ...over });

/** A bot that sends a live flow from `booking.pick` (entered from `idle` on text) and leaves on `book`. */
function bookingBot(flows: Readonly<Record<string, FlowScreens>> | undefined) {
  const machine = setup({ types: { events: {} as Ev } }).createMachine({
    id: 'b',
    initial: 'idle',
    states: {
      idle: { on: { text: 'booking' } },
      booking: { initial: 'pick', states: { pick: { entry: say(liveFlow()), on: { book: '#b.idle' } } } },
    },
  });
  return defineBot({ id: 'b', machine, options: flows ? { flows } : {} });
}

describe('checkBot on live flows', () => {
  it('passes a live flow its state answers, by its own entry or a parent’s, with no flow transition when a durable submit completes it', () => {
    expect(checkBot(bookingBot({ 'booking.pick': answers() }))).toEqual([]);
    expect(checkBot(bookingBot({ booking: answers({ flowId: '777' }) }))).toEqual([]);
  });

  it('reports a live flow no declaration answers: every request from it gets 427', () => {
    expect(checkBot(bookingBot(undefined))).toEqual<Finding[]>([
      { bot: 'b', state: 'booking.pick', kind: 'flow-without-handler', message: 'flow 777 is sent but no "flow" transition receives its answers' },
      {
        bot: 'b',
        state: 'booking.pick',
        kind: 'live-flow-unanswered',
        message: 'live flow 777 (data_exchange) is sent but no options.flows entry answers its screens in booking.pick or a parent: every request from it gets 427',
      },
    ]);
  });

  it('looks the declaration up where the user is once a transition sent the flow', () => {
    const machine = setup({ types: { events: {} as Ev } }).createMachine({
      initial: 'idle',
      states: { idle: { on: { text: { target: 'waiting', actions: say(liveFlow()) } } }, waiting: { on: { book: 'idle' } } },
    });
    const findings = checkBot(defineBot({ id: 't', machine, options: { flows: { idle: answers() } } }));
    expect(findings.map((f) => [f.state, f.kind, f.severity])).toEqual([
      ['idle', 'flow-answers-unused', 'warning'],
      ['waiting', 'flow-without-handler', undefined],
      ['waiting', 'live-flow-unanswered', undefined],
    ]);
    expect(checkBot(defineBot({ id: 't', machine, options: { flows: { waiting: answers() } } }))).toEqual([]);
  });

  it('keeps reporting a missing flow transition when only read-only answers could complete the flow', () => {
    const findings = checkBot(bookingBot({ booking: answers({ screens: { DAYS: () => flowComplete({}) } }) }));
    expect(findings.map((f) => f.kind)).toEqual(['flow-without-handler']);
  });

  it('reports a live flow sent as the conversation ends', () => {
    const machine = setup({ types: { events: {} as Ev } }).createMachine({ initial: 'idle', states: { idle: { on: { text: 'bye' } }, bye: { type: 'final', entry: say(liveFlow()) } } });
    const kinds = checkBot(defineBot({ id: 'f', machine, options: { flows: { bye: answers() } } })).map((f) => [f.state, f.kind]);
    expect(kinds).toContainEqual(['bye', 'live-flow-unanswered']);
  });

  it('reports each problem of the live bot, warnings marked', () => {
    expect(checkBot(live)).toEqual<Finding[]>([
      {
        bot: 'live',
        state: 'unanswered',
        kind: 'live-flow-unanswered',
        message: 'live flow 111 (data_exchange) is sent but no options.flows entry answers its screens in unanswered or a parent: every request from it gets 427',
      },
      { bot: 'live', state: 'mismatched', kind: 'flow-id-mismatch', message: 'flows["mismatched"] declares flowId "999", but this state sends flow 222: its answers are for another flow\'s screens' },
      {
        bot: 'live',
        state: 'booking',
        kind: 'flow-screen-unanswered',
        id: 'SLOTS',
        message: 'screen SLOTS of flow 333 (flowForms) has no answer in flows["booking"].screens: submitting it shows the user an error',
      },
      {
        bot: 'live',
        state: 'booking',
        kind: 'flow-screen-undescribed',
        id: 'OLD',
        severity: 'warning',
        message: 'flows["booking"].screens.OLD answers a screen flowForms["333"] does not describe: the simulators cannot show it (a stale name, or a screen missing from flowForms)',
      },
      {
        bot: 'live',
        state: 'idle',
        kind: 'flow-answers-unused',
        severity: 'warning',
        message: 'flows["idle"] answers a live flow\'s screens, but neither this state nor a state inside it sends a data_exchange flow',
      },
    ]);
  });

  it('does not look at navigate flows', () => {
    const machine = setup({ types: { events: {} as Ev } }).createMachine({
      initial: 'idle',
      states: { idle: { on: { text: 'form' } }, form: { entry: say(flow({ body: 'Fill in', flowId: '5', cta: 'Open', screen: 'FORM' })), on: { flow: 'idle' } } },
    });
    expect(checkBot(defineBot({ id: 'n', machine, options: { flowForms: { '5': { screens: { OTHER: { fields: [] } } } } } }))).toEqual([]);
  });
});

describe('colloquy check on live flows', () => {
  it('prints the problems and the warnings, and exits 1', async () => {
    const io = fakeIo();
    expect(await checkCommand([fixture('live-bot.ts')], io)).toBe(1);
    const lines = io.stdout().trimEnd().split('\n');
    expect(lines).toEqual([
      'live › unanswered › live-flow-unanswered: live flow 111 (data_exchange) is sent but no options.flows entry answers its screens in unanswered or a parent: every request from it gets 427',
      'live › mismatched › flow-id-mismatch: flows["mismatched"] declares flowId "999", but this state sends flow 222: its answers are for another flow\'s screens',
      'live › booking › flow-screen-unanswered (SLOTS): screen SLOTS of flow 333 (flowForms) has no answer in flows["booking"].screens: submitting it shows the user an error',
      'live › booking › flow-screen-undescribed (OLD) (warning): flows["booking"].screens.OLD answers a screen flowForms["333"] does not describe: the simulators cannot show it (a stale name, or a screen missing from flowForms)',
      'live › idle › flow-answers-unused (warning): flows["idle"] answers a live flow\'s screens, but neither this state nor a state inside it sends a data_exchange flow',
      '1 bot checked: 5 findings (2 warnings) in 1 bot.',
    ]);
  });

  it('exits 0 on warnings alone, and says so', async () => {
    const io = fakeIo();
    expect(await main(['check', fixture('warned-bot.ts')], io)).toBe(0);
    expect(io.stdout().trimEnd().split('\n')).toEqual([
      'warned › booking › flow-screen-undescribed (EXTRA) (warning): flows["booking"].screens.EXTRA answers a screen flowForms["333"] does not describe: the simulators cannot show it (a stale name, or a screen missing from flowForms)',
      'warned › later › flow-answers-unused (warning): flows["later"] answers a live flow\'s screens, but neither this state nor a state inside it sends a data_exchange flow',
      '1 bot checked: 2 findings (2 warnings only) in 1 bot.',
    ]);
    expect(io.stderr()).toBe('');
  });

  it('marks warnings in --json and fails on the folder holding a bot with problems', async () => {
    const io = fakeIo(true);
    expect(await main(['check', '--json', fixture('.')], io)).toBe(1);
    const out = JSON.parse(io.stdout()) as { bots: string[]; findings: Finding[] };
    expect(out.bots.sort()).toEqual(['live', 'warned']);
    expect(out.findings).toEqual([...checkBot(live), ...checkBot(warned)]);
    expect(out.findings.filter((f) => f.severity === 'warning')).toHaveLength(4);
  });
});
