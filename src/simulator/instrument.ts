/**
 * A copy of a bot's machine made for walking it. Same config, same implementations (XState's own
 * `provide()` rebuilds a machine from these two the same way), with three changes:
 *  - a marker is emitted on entering each state and before each exit and transition action list,
 *    so the walk can tell which states were entered (even on the way through) and which state's
 *    `entry` said what;
 *  - every guard is replaced by a switch the walk turns on and off, so guarded branches (a typed
 *    answer that must parse, a counter that must reach 3) are explored too;
 *  - the bot's `sampleContext` is laid over the initial context.
 */
import { createMachine, emit, type AnyStateMachine } from 'xstate';

/** The type of the marker events. */
export const MARK = 'colloquy.check.mark';

/** A marker: what the `say()` actions that follow it belong to. */
export type Mark = { readonly type: typeof MARK; readonly at: 'entry'; readonly state: string } | { readonly type: typeof MARK; readonly at: 'exit' | 'transition' };

/** The instrumented machine and its guard switches. */
export interface Instrumented {
  readonly machine: AnyStateMachine;
  /** The switches that are on: the walk sets them before each transition. */
  readonly forced: Set<number>;
  /** The switch of each replacement guard (the guard function as XState keeps it). */
  readonly switches: ReadonlyMap<unknown, number>;
}

type Config = Record<string, unknown>;
type NewGuard = () => () => boolean;

/** Builds the instrumented copy of a machine. */
export function instrument(machine: AnyStateMachine, sampleContext?: Record<string, unknown>): Instrumented {
  const forced = new Set<number>();
  const switches = new Map<unknown, number>();
  const newGuard: NewGuard = () => {
    const key = switches.size;
    const guard = (): boolean => forced.has(key);
    switches.set(guard, key);
    return guard;
  };
  const config = stateNode(machine.config as Config, [], newGuard);
  if (sampleContext !== undefined) config['context'] = withSample(config['context'], sampleContext);
  return { machine: createMachine(config as never, machine.implementations as never), forced, switches };
}

function stateNode(cfg: Config, path: readonly string[], newGuard: NewGuard): Config {
  const out: Config = { ...cfg };
  const entered: Mark = { type: MARK, at: 'entry', state: path.join('.') };
  out['entry'] = [emit(entered), ...toArray(cfg['entry'])];
  prependMark(out, 'exit', { type: MARK, at: 'exit' });
  const tx = (t: unknown): unknown => transitions(t, newGuard);
  if (isObject(cfg['on'])) out['on'] = mapValues(cfg['on'], tx);
  if (isObject(cfg['after'])) out['after'] = mapValues(cfg['after'], tx);
  if (cfg['always'] !== undefined) out['always'] = tx(cfg['always']);
  if (cfg['onDone'] !== undefined) out['onDone'] = tx(cfg['onDone']);
  const inv = cfg['invoke'];
  if (Array.isArray(inv)) out['invoke'] = inv.map((i) => invocation(i, tx));
  else if (inv !== undefined) out['invoke'] = invocation(inv, tx);
  const states = cfg['states'];
  if (isObject(states)) {
    out['states'] = Object.fromEntries(Object.entries(states).map(([key, child]) => [key, isObject(child) ? stateNode(child, [...path, key], newGuard) : child]));
  }
  return out;
}

function invocation(inv: unknown, tx: (t: unknown) => unknown): unknown {
  if (!isObject(inv)) return inv;
  const out: Config = { ...inv };
  for (const key of ['onDone', 'onError', 'onSnapshot']) if (inv[key] !== undefined) out[key] = tx(inv[key]);
  return out;
}

/** A transition (a target, a config, or a list of them) with its guard switched and its actions marked. */
function transitions(t: unknown, newGuard: NewGuard): unknown {
  if (Array.isArray(t)) return t.map((one) => transitions(one, newGuard));
  if (!isObject(t)) return t;
  const out: Config = { ...t };
  if (t['guard'] !== undefined) out['guard'] = newGuard();
  prependMark(out, 'actions', { type: MARK, at: 'transition' });
  return out;
}

function prependMark(cfg: Config, key: string, mark: Mark): void {
  const list = toArray(cfg[key]);
  if (list.length > 0) cfg[key] = [emit(mark), ...list];
}

function withSample(original: unknown, sample: Record<string, unknown>): (args: unknown) => Record<string, unknown> {
  return (args) => {
    const base: unknown = typeof original === 'function' ? (original as (a: unknown) => unknown)(args) : original;
    return { ...(isObject(base) ? base : {}), ...sample };
  };
}

function toArray(v: unknown): unknown[] {
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

function mapValues(o: Config, f: (v: unknown) => unknown): Config {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

function isObject(v: unknown): v is Config {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
