/** The walk behind `colloquy check` and `graph` is `@xstate/graph`'s traversal (architecture.md §5). */
import * as graphLib from '@xstate/graph';
import { describe, expect, it, vi } from 'vitest';
import pizza from '../../bots/pizza.js';
import { checkBot } from '../../src/simulator/check.js';
import { mermaidGraph } from '../../src/simulator/graph.js';
import { walkBot } from '../../src/simulator/walk.js';

vi.mock('@xstate/graph', async (importOriginal) => {
  const real = await importOriginal<typeof graphLib>();
  return { ...real, getAdjacencyMap: vi.fn(real.getAdjacencyMap), toDirectedGraph: vi.fn(real.toDirectedGraph), getStateNodes: vi.fn(real.getStateNodes) };
});

describe('walking with @xstate/graph', () => {
  it('check traverses the machine with getAdjacencyMap and reaches every state of the pizza bot', () => {
    vi.mocked(graphLib.getAdjacencyMap).mockClear();
    const walk = walkBot(pizza);
    expect(graphLib.getAdjacencyMap).toHaveBeenCalledTimes(1);
    expect([...walk.reached].sort()).toEqual(['abandoned', 'done', 'ordering', 'ordering.address', 'ordering.menu', 'ordering.size', 'placed', 'tracking']);
    const entries = new Set(walk.sayings.map((s) => s.entryOf));
    for (const state of ['ordering.menu', 'ordering.size', 'ordering.address', 'placed', 'done', 'abandoned']) expect(entries).toContain(state);
    expect(checkBot(pizza)).toEqual([]);
    expect(graphLib.getStateNodes).toHaveBeenCalled();
  });

  it('graph draws its edges from toDirectedGraph', () => {
    vi.mocked(graphLib.toDirectedGraph).mockClear();
    const src = mermaidGraph(pizza);
    expect(graphLib.toDirectedGraph).toHaveBeenCalledTimes(1);
    expect(src).toContain('placed --> tracking : reply.track');
  });
});
