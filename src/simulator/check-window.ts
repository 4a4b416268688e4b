/**
 * `colloquy check`'s look at the 24-hour window: timers that can fire 24 hours or more after the
 * user last wrote (one long `after`, or a chain of them with no user message between), in a bot
 * that declares no window policy. On a provider that keeps the window (the Cloud API) what such a
 * timer says would not be delivered as it is.
 */
import type { AnyStateNode, AnyTransitionDefinition } from 'xstate';
import type { Bot } from '../conversation/bot.js';
import { WINDOW_MS } from '../conversation/window.js';
import { allNodes, nodeName } from './nodes.js';

/** A chain of timers that reaches past the window. */
export interface LongTimer {
  /** The state whose timer fires past the window. */
  readonly state: string;
  readonly message: string;
}

/** Timers of a bot without a window policy that fire past the window; none when it has a policy. */
export function longTimers(bot: Bot): LongTimer[] {
  if (bot.options.window !== undefined) return [];
  const out = new Map<string, LongTimer>();
  const delayOf = delays(bot);
  const walk = (node: AnyStateNode, total: number, path: readonly string[], seen: ReadonlySet<AnyStateNode>): void => {
    for (const t of afterOf(node)) {
      const d = delayOf(t);
      if (d === undefined) continue;
      const state = nodeName(node);
      const steps = [...path, `${hours(d)} in ${state}`];
      if (total + d >= WINDOW_MS) {
        if (!out.has(state))
          out.set(state, {
            state,
            message: `a timer fires ${hours(total + d)} after the user last wrote (${steps.join(', then ')}), past WhatsApp's 24-hour window, and the bot declares no window policy (options.window): on the Cloud API its message would not be delivered`,
          });
        continue;
      }
      for (const target of t.target ?? []) {
        for (const next of entered(target)) {
          if (seen.has(next)) {
            if (d > 0 && !out.has(state))
              out.set(state, {
                state,
                message: `timers repeat in a loop through ${state} with no user message between, so they reach past WhatsApp's 24-hour window, and the bot declares no window policy (options.window)`,
              });
            continue;
          }
          walk(next, total + d, steps, new Set([...seen, next]));
        }
      }
    }
  };
  for (const node of allNodes(bot.machine)) walk(node, 0, [], new Set([node]));
  return [...out.values()];
}

function afterOf(node: AnyStateNode): AnyTransitionDefinition[] {
  return (node.after ?? []) as AnyTransitionDefinition[];
}

/** The nodes a transition's target enters whose timers start: the target and its initial descendants. */
function entered(target: AnyStateNode): AnyStateNode[] {
  const out = [target];
  let n: AnyStateNode | undefined = target;
  while (n && n.type === 'compound') {
    n = n.initial?.target[0];
    if (n) out.push(n);
  }
  return out;
}

/** A transition's delay in ms: a number, or a named delay (a number, or a function of the sample context). */
function delays(bot: Bot): (t: AnyTransitionDefinition) => number | undefined {
  const named = (bot.machine.implementations as { delays?: Record<string, unknown> }).delays ?? {};
  const context = bot.options.sampleContext ?? {};
  return (t) => {
    const d = (t as { delay?: unknown }).delay;
    if (typeof d === 'number') return d;
    const impl = typeof d === 'string' ? named[d] : d;
    if (typeof impl === 'number') return impl;
    if (typeof impl !== 'function') return undefined;
    try {
      const v: unknown = (impl as (a: unknown) => unknown)({ context, event: { type: 'colloquy.check' } });
      return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
    } catch {
      return undefined;
    }
  };
}

function hours(ms: number): string {
  const h = ms / 3_600_000;
  return h >= 1 ? `${Number.isInteger(h) ? h : h.toFixed(1)} h` : `${Math.round(ms / 60_000)} min`;
}
