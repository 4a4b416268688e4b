/**
 * The heap of a `colloquy serve` process. V8 lets the old generation grow up to four times what a
 * full GC left live before it collects again, tuned for throughput: under a sustained load the
 * server's ~30 MB of live objects sat in ~100 MB of heap, and its resident memory peaked at
 * 240–260 MB. Growing by at most what is live (2× instead of 4×) keeps the peak under 200 MB for a
 * few more (mostly concurrent) collections: at 1,000 webhooks/s, 50% cost a third of the headroom,
 * 100% little (`npm run bench -- --only=open_loop` with COLLOQUY_HEAP_GROWTH_PERCENT=0, 50, 100).
 * Only the command tunes its own process: `startServer` embedded in someone's application leaves
 * their heap alone.
 */
import v8 from 'node:v8';

/** The default growth, in percent of the live heap. */
export const DEFAULT_HEAP_GROWTH_PERCENT = 100;

const FLAG = /--heap[-_]growing[-_]percent/;

/** What {@link tuneHeap} did: set the growth, left a flag the process was started with, or left V8's default (0). */
export type HeapTuning = { readonly outcome: 'set'; readonly percent: number } | { readonly outcome: 'kept-flag' | 'v8-default' };

/**
 * Sets V8's `--heap-growing-percent` for this process, unless the process was started with that
 * flag (it wins) or `percent` is 0 (V8's own heuristics). V8 reads the flag at every full GC, so
 * setting it at run time takes effect from the next one.
 */
export function tuneHeap(
  percent: number | undefined,
  started: { readonly execArgv: readonly string[]; readonly nodeOptions: string | undefined } = { execArgv: process.execArgv, nodeOptions: process.env['NODE_OPTIONS'] },
  setFlags: (flags: string) => void = (flags) => v8.setFlagsFromString(flags),
): HeapTuning {
  if (started.execArgv.some((a) => FLAG.test(a)) || FLAG.test(started.nodeOptions ?? '')) return { outcome: 'kept-flag' };
  const p = percent ?? DEFAULT_HEAP_GROWTH_PERCENT;
  if (p === 0) return { outcome: 'v8-default' };
  setFlags(`--heap-growing-percent=${p}`);
  return { outcome: 'set', percent: p };
}
