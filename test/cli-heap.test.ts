/** `colloquy serve` tunes V8's heap growth for its own process, unless told otherwise. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_HEAP_GROWTH_PERCENT, tuneHeap } from '../src/cli/heap.js';
import { loadConfig } from '../src/config.js';

const fresh = { execArgv: [], nodeOptions: undefined };

describe('tuneHeap', () => {
  it('sets V8’s heap growth to the default, or to the percent given', () => {
    const set: string[] = [];
    expect(tuneHeap(undefined, fresh, (f) => set.push(f))).toEqual({ outcome: 'set', percent: DEFAULT_HEAP_GROWTH_PERCENT });
    expect(tuneHeap(120, fresh, (f) => set.push(f))).toEqual({ outcome: 'set', percent: 120 });
    expect(set).toEqual([`--heap-growing-percent=${DEFAULT_HEAP_GROWTH_PERCENT}`, '--heap-growing-percent=120']);
  });

  it('leaves V8’s own heuristics with 0', () => {
    const set: string[] = [];
    expect(tuneHeap(0, fresh, (f) => set.push(f))).toEqual({ outcome: 'v8-default' });
    expect(set).toEqual([]);
  });

  it('never overrides a flag the process was started with', () => {
    const set: string[] = [];
    expect(tuneHeap(50, { execArgv: ['--heap-growing-percent=300'], nodeOptions: undefined }, (f) => set.push(f))).toEqual({ outcome: 'kept-flag' });
    expect(tuneHeap(50, { execArgv: [], nodeOptions: '--max-old-space-size=512 --heap_growing_percent=10' }, (f) => set.push(f))).toEqual({ outcome: 'kept-flag' });
    expect(set).toEqual([]);
  });

  it('is accepted by V8 itself (a real setFlagsFromString call does not throw)', () => {
    expect(tuneHeap(DEFAULT_HEAP_GROWTH_PERCENT, fresh).outcome).toBe('set');
  });
});

describe('COLLOQUY_HEAP_GROWTH_PERCENT', () => {
  it('is a whole percent from 0 to 1000; anything else stops the start naming the variable', () => {
    expect(loadConfig({ COLLOQUY_HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({ COLLOQUY_HEAP_GROWTH_PERCENT: '75' }).heapGrowthPercent).toBe(75);
    expect(loadConfig({}).heapGrowthPercent).toBeUndefined();
    for (const bad of ['-1', '1001', 'half', '1.5']) expect(() => loadConfig({ COLLOQUY_HEAP_GROWTH_PERCENT: bad })).toThrow(/COLLOQUY_HEAP_GROWTH_PERCENT/);
  });
});
