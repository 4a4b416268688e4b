import { fileURLToPath } from 'node:url';
import { setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import { graphCommand } from '../../src/cli/graph.js';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { ColloquyError } from '../../src/errors.js';
import { defineBot, say, text, type ColloquyEvent } from '../../src/index.js';
import { formatDelay, mermaidGraph } from '../../src/simulator/graph.js';
import nested from '../fixtures/check/nested-bot.js';
import order from '../fixtures/order-bot.js';
import variants from '../fixtures/variants-bot.js';
import appointments from '../../bots/appointments.js';
import pizza from '../../bots/pizza.js';
import support from '../../bots/support.js';
import type { Bot } from '../../src/conversation/bot.js';
import { allNodes } from '../../src/simulator/nodes.js';
import { parseMermaid } from './mermaid.js';

const fixture = (name: string): string => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

function fakeIo(json = false): Io & { stdout: () => string; stderr: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return { out: (t) => out.push(t), err: (t) => err.push(t), env: {}, json, stdout: () => out.join(''), stderr: () => err.join('') };
}

interface Diagram {
  readonly header: string;
  /** `from --> to : label`, trimmed, `[*]` for start and end. */
  readonly edges: string[];
  /** `id : description`. */
  readonly descriptions: string[];
  /** Composite state ids, in the order opened. */
  readonly composites: string[];
  readonly lines: string[];
}

/** Reads the parts of a diagram the tests look at, and checks its braces balance. */
function parse(src: string): Diagram {
  const lines = src
    .trimEnd()
    .split('\n')
    .map((l) => l.trim());
  let depth = 0;
  const composites: string[] = [];
  for (const l of lines) {
    const open = /^state (\S+) \{$/.exec(l);
    if (open) {
      depth++;
      composites.push(open[1]!);
    }
    if (l === '}') depth--;
    expect(depth).toBeGreaterThanOrEqual(0);
  }
  expect(depth).toBe(0);
  return {
    header: lines[0] ?? '',
    edges: lines.filter((l) => / --> /.test(l)),
    descriptions: lines.filter((l) => /^\w+ : /.test(l) && !/ --> /.test(l)),
    composites,
    lines,
  };
}

describe('mermaidGraph', () => {
  it('draws the order bot: messages, events, timers, invocations, start and end', () => {
    const d = parse(mermaidGraph(order));
    expect(d.header).toBe('stateDiagram-v2');
    expect(d.descriptions).toEqual(['menu : list [margherita, pepperoni, status]', 'size : buttons(image) [small, large]', 'address : flow', 'done : text']);
    expect(d.lines).toContain('checking');
    expect(d.edges.sort()).toEqual([
      '[*] --> menu',
      'address --> done : flow',
      'address --> done : text',
      'checking --> menu : done(lookup)',
      'done --> [*]',
      'menu --> checking : reply.status',
      'menu --> size : reply.margherita',
      'menu --> size : reply.pepperoni',
      'size --> address : reply.large',
      'size --> address : reply.small',
      'size --> menu : after 10m',
    ]);
    expect(d.composites).toEqual([]);
  });

  it('draws a handler of the root as coming from any state', () => {
    const d = parse(mermaidGraph(variants));
    expect(d.lines).toContain('state "any state" as any_state');
    expect(d.edges).toContain('any_state --> failed : delivery.failed');
    expect(d.descriptions).toContain('texts : text + sms');
    expect(d.descriptions).toContain('document : buttons(document) [next]');
  });

  it('draws nested states as composite states, with guards, wildcards, named delays and loops', () => {
    const src = mermaidGraph(nested);
    const d = parse(src);
    expect(d.composites).toEqual(['shop']);
    const inside = src.slice(src.indexOf('state shop {'), src.indexOf('\n  }\n'));
    for (const line of [
      '[*] --> shop_pick',
      'state "pick" as shop_pick',
      'shop_pick : list [tea, coffee]',
      'shop_pick --> shop_qty : reply.*',
      'shop_qty --> shop_confirm : text [isNumber]',
      'shop_qty --> shop_qty : text',
      'shop_confirm : buttons [yes, cancel]',
      'shop_paid --> [*]',
    ])
      expect(inside).toContain(`    ${line}\n`);
    for (const edge of ['shop --> greet : reply.cancel', 'shop --> bye : done', 'shop_qty --> greet : after patience', 'sorry --> greet : always']) {
      expect(src).toContain(`\n  ${edge}\n`);
    }
    expect(d.descriptions).toContain('greet : buttons [shop, bye]');
    expect(src).not.toContain('(none)');
  });

  it('keeps state ids apart from Mermaid keywords', () => {
    const machine = setup({ types: { events: {} as ColloquyEvent } }).createMachine({
      initial: 'state',
      states: { state: { entry: say(text('hi')), on: { text: 'end' } }, end: { type: 'final' } },
    });
    const d = parse(mermaidGraph(defineBot({ id: 'kw', machine })));
    expect(d.edges).toEqual(['[*] --> s_state', 's_end --> [*]', 's_state --> s_end : text']);
    expect(d.lines).toContain('state "state" as s_state');
  });

  it('formats delays', () => {
    expect([formatDelay(600_000), formatDelay(3_600_000), formatDelay(30_000), formatDelay(1500), formatDelay(90 * 60_000)]).toEqual(['10m', '1h', '30s', '1500ms', '90m']);
  });
});

describe('mermaidGraph, read by Mermaid itself', () => {
  const bots: readonly Bot[] = [pizza, support, appointments, order, variants, nested];

  it.each(bots.map((b) => [b.id, b] as const))('%s: every state box is titled with its name, what it sends beneath', async (_id, bot) => {
    const { states } = await parseMermaid(mermaidGraph(bot));
    for (const node of allNodes(bot.machine)) {
      if (node.type === 'history') continue;
      const matches = states.filter((s) => s.label === node.key && s.shape !== 'note' && s.shape !== 'noteGroup');
      expect(matches.length, `state ${node.path.join('.')}`).toBeGreaterThanOrEqual(1);
    }
    const titles = states.filter((s) => !s.shape.startsWith('state') && !s.shape.startsWith('note')).map((s) => s.label);
    const names = new Set(allNodes(bot.machine).map((n) => n.key));
    for (const t of titles) expect(names.has(t) || t === 'any state', `box titled "${t}"`).toBe(true);
  });

  it('pizza: the two final states are told apart, and each message is beneath its state', async () => {
    const { states, edges } = await parseMermaid(mermaidGraph(pizza));
    const box = (label: string) => states.find((s) => s.label === label);
    expect(box('placed')).toMatchObject({ shape: 'rectWithTitle', description: ['buttons(document) [track, done]'] });
    expect(box('done')).toMatchObject({ description: ['text'] });
    expect(box('abandoned')).toMatchObject({ description: ['text'] });
    expect(box('menu')).toMatchObject({ description: ['list [margherita, pepperoni, veggie, lemonade]'] });
    expect(box('tracking')).toMatchObject({ shape: 'rect' });
    expect(edges).toContainEqual({ from: 'placed', to: 'tracking', label: 'reply.track' });
    expect(edges).toContainEqual({ from: 'tracking', to: 'done', label: 'done(trackOrder)' });
  });

  it('a state that says two things keeps its name above both; header-less buttons are `buttons`', async () => {
    const { states } = await parseMermaid(mermaidGraph(support));
    expect(states.find((s) => s.id === 'callback')).toMatchObject({ label: 'callback', description: ['text', 'sms'] });
    const nestedStates = (await parseMermaid(mermaidGraph(nested))).states;
    expect(nestedStates.find((s) => s.label === 'confirm')?.description).toEqual(['buttons [yes, cancel]']);
  });
});

describe('colloquy graph', () => {
  it('prints the diagram of a bot file', async () => {
    const io = fakeIo();
    expect(await graphCommand([fixture('order-bot.ts')], io)).toBe(0);
    expect(io.stdout()).toBe(mermaidGraph(order));
  });

  it('prints {bot, mermaid} with --json', async () => {
    const io = fakeIo(true);
    expect(await graphCommand([fixture('order-bot.ts')], io)).toBe(0);
    expect(JSON.parse(io.stdout())).toEqual({ bot: 'order', mermaid: mermaidGraph(order) });
  });

  it('wants exactly one bot file', async () => {
    await expect(graphCommand([], fakeIo())).rejects.toThrow(ColloquyError);
    await expect(graphCommand([fixture('check')], fakeIo())).rejects.toThrow(/holds 2 bots; name one bot file/);
    const io = fakeIo();
    expect(await main(['graph'], io)).toBe(2);
    expect(io.stderr()).toBe('colloquy graph: usage: colloquy graph <bot file>\n');
  });
});
