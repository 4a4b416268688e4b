/**
 * Bot versions and migrations: the types a bot declares, their validation, and the step that
 * brings a stored snapshot of an older version to the bot's version (state paths renamed, context
 * transformed). Pure functions over the persisted snapshot's JSON; the runtime decides when.
 */
import type { AnyStateMachine } from 'xstate';
import { BotError } from '../errors.js';

/** One migration step: what changes from the previous version to the version it is keyed by. */
export interface BotMigration {
  /**
   * State paths renamed, old dotted path → new dotted path from the machine's root
   * (`'ordering.size': 'ordering.pickSize'`). Renaming a compound state moves its children along.
   */
  readonly states?: Readonly<Record<string, string>> | undefined;
  /** Transforms the context (after the renames). A throw fails the conversation's turn. */
  // The context's shape differs between versions: the author knows it, the types cannot.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly context?: ((context: any, info: { readonly from: number; readonly to: number; readonly state: string }) => unknown) | undefined;
}

/** What happens to a conversation whose state exists neither in the bot's version nor via a migration. */
export type IncompatiblePolicy = 'restart' | 'end' | 'fail';

/** The accepted {@link IncompatiblePolicy} values. */
export const INCOMPATIBLE_POLICIES: readonly IncompatiblePolicy[] = ['restart', 'end', 'fail'];

/** Checks a bot's migrations: integer keys from 2 to its version, dotted paths, functions; targets of the last step exist. */
export function validateMigrations(bot: string, version: number, migrations: unknown): Readonly<Record<number, BotMigration>> {
  if (typeof migrations !== 'object' || migrations === null || Array.isArray(migrations)) throw new BotError(`Bot "${bot}": migrations must be an object keyed by version`, { bot });
  const out: Record<number, BotMigration> = {};
  for (const [k, step] of Object.entries(migrations as Record<string, unknown>)) {
    const to = Number(k);
    if (!Number.isSafeInteger(to) || to < 2 || to > version) {
      throw new BotError(`Bot "${bot}": migration key ${JSON.stringify(k)} must be a version from 2 to ${version} (the version the step leads to)`, { bot });
    }
    if (typeof step !== 'object' || step === null) throw new BotError(`Bot "${bot}": migration ${to} must be an object ({ states?, context? })`, { bot });
    const { states, context } = step as BotMigration;
    if (context !== undefined && typeof context !== 'function') throw new BotError(`Bot "${bot}": migration ${to}: context must be a function`, { bot });
    for (const [from, target] of Object.entries(states ?? {})) {
      if (!isPath(from) || typeof target !== 'string' || !isPath(target)) {
        throw new BotError(`Bot "${bot}": migration ${to}: states must map dotted state paths to dotted state paths (got ${JSON.stringify(from)} → ${JSON.stringify(target)})`, { bot, state: from });
      }
    }
    out[to] = step as BotMigration;
  }
  return out;
}

/** Checks that the last step's targets exist in the bot's own machine (a typo found at load, not at a customer's turn). */
export function validateMigrationTargets(bot: string, version: number, machine: AnyStateMachine, migrations: Readonly<Record<number, BotMigration>>): void {
  for (const target of Object.values(migrations[version]?.states ?? {})) {
    if (!pathExists(machine, target.split('.'))) {
      throw new BotError(`Bot "${bot}": migration ${version} renames a state to "${target}", which this version's machine does not have`, { bot, state: target });
    }
  }
}

const isPath = (p: unknown): p is string => typeof p === 'string' && p.length > 0 && p.split('.').every((s) => s.length > 0);

/** An active leaf of a state value: its path, and whether XState writes it as a string (`{a: 'b'}`) or an empty object (a parallel region's atomic state). */
interface Leaf {
  path: string[];
  asString: boolean;
}

/** The active leaves of a state value. */
export function leavesOf(value: unknown, prefix: string[] = []): Leaf[] {
  if (typeof value === 'string') return [{ path: [...prefix, value], asString: true }];
  if (typeof value !== 'object' || value === null) return [];
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return prefix.length ? [{ path: prefix, asString: false }] : [];
  return entries.flatMap(([k, v]) => leavesOf(v, [...prefix, k]));
}

/** The state value made of these leaves. */
export function valueFromLeaves(leaves: readonly Leaf[]): unknown {
  const first = leaves[0];
  if (leaves.length === 1 && first && first.asString && first.path.length === 1) return first.path[0];
  const root: Record<string, unknown> = {};
  for (const leaf of leaves) {
    let node = root;
    const parents = leaf.asString ? leaf.path.slice(0, -1) : leaf.path;
    parents.forEach((seg, i) => {
      const last = i === parents.length - 1;
      if (last && leaf.asString) {
        node[seg] = leaf.path.at(-1);
        return;
      }
      if (typeof node[seg] !== 'object' || node[seg] === null) node[seg] = {};
      node = node[seg] as Record<string, unknown>;
    });
  }
  return root;
}

/** The dotted paths of a state value's active leaves (`ordering.size`), for people and reports. */
export function statePaths(value: unknown): string[] {
  return leavesOf(value).map((l) => l.path.join('.'));
}

/** A state value with only the declared renames from `from` up to the bot's version applied (no context functions run). */
export function renamedValue(bot: { migrations: Readonly<Record<number, BotMigration>>; version: number }, value: unknown, from: number): unknown {
  let leaves = leavesOf(value);
  for (let v = from + 1; v <= bot.version; v++) {
    const renames = bot.migrations[v]?.states;
    if (renames) leaves = leaves.map((l) => ({ ...l, path: renamePath(l.path, renames) }));
  }
  return valueFromLeaves(leaves);
}

/** Renames a path by the longest matching prefix among the renames. */
function renamePath(path: readonly string[], renames: Readonly<Record<string, string>>): string[] {
  for (let n = path.length; n > 0; n--) {
    const to = renames[path.slice(0, n).join('.')];
    if (to !== undefined) return [...to.split('.'), ...path.slice(n)];
  }
  return [...path];
}

/** Renames a state node id (`<machine id>.<path>`); custom ids are left as they are. */
function renameId(id: string, rootId: string, renames: Readonly<Record<string, string>>): string {
  if (!id.startsWith(`${rootId}.`)) return id;
  return [rootId, ...renamePath(id.slice(rootId.length + 1).split('.'), renames)].join('.');
}

/** Whether a path from the root names a state node of the machine. */
export function pathExists(machine: AnyStateMachine, path: readonly string[]): boolean {
  let node: { states?: Record<string, unknown> } = machine.root as never;
  for (const seg of path) {
    const next = node.states?.[seg];
    if (!next) return false;
    node = next as typeof node;
  }
  return true;
}

/** The leaves of a state value that the machine does not have, as dotted paths (empty when it fits). */
export function missingStates(machine: AnyStateMachine, value: unknown): string[] {
  return leavesOf(value)
    .filter((l) => !pathExists(machine, l.path))
    .map((l) => l.path.join('.'));
}

/** A persisted snapshot, as far as migrations read it. */
interface PersistedSnapshot {
  value?: unknown;
  context?: unknown;
  historyValue?: Record<string, { id: string }[]>;
  children?: Record<string, { src?: unknown; [k: string]: unknown }>;
  [k: string]: unknown;
}

/** A snapshot brought to a newer version, with the id renames it took (for timers). */
export interface MigratedSnapshot {
  readonly snapshot: unknown;
  /** Maps an old state node id to its new one (identity for ids not renamed). */
  readonly renameId: (id: string) => string;
  /** The steps applied, by the version they lead to. */
  readonly steps: readonly number[];
}

/** A migration step's context function threw. */
export class MigrationError extends BotError {
  override name = 'MigrationError';
  constructor(
    bot: string,
    readonly from: number,
    readonly to: number,
    state: string,
    cause: unknown,
  ) {
    super(`Bot "${bot}": migration ${to} (from version ${from}) failed in state "${state}": ${cause instanceof Error ? cause.message : String(cause)}`, { bot, state }, { cause });
  }
}

/** A conversation's state exists neither in its bot's version nor via a migration, and the bot says `onIncompatible: 'fail'`. */
export class IncompatibleStateError extends BotError {
  override name = 'IncompatibleStateError';
  constructor(
    bot: string,
    readonly fromVersion: number,
    state: string,
    message: string,
  ) {
    super(message, { bot, state });
  }
}

/**
 * Applies the declared steps after `from` up to `to` to a persisted snapshot: renames state paths
 * in its value, history and children's ids, then transforms the context. A version without a step
 * changes nothing. Throws {@link MigrationError} when a context function throws.
 */
export function migrateSnapshot(bot: { id: string; machine: AnyStateMachine; migrations: Readonly<Record<number, BotMigration>> }, snapshot: unknown, from: number, to: number): MigratedSnapshot {
  const rootId = bot.machine.root.id;
  let s = structuredClone(snapshot) as PersistedSnapshot;
  const stored = statePaths(s.value).join(', ');
  const applied: Readonly<Record<string, string>>[] = [];
  const steps: number[] = [];
  for (let v = from + 1; v <= to; v++) {
    const step = bot.migrations[v];
    if (!step) continue;
    steps.push(v);
    const renames = step.states ?? {};
    if (Object.keys(renames).length) {
      s = renameStates(s, rootId, renames);
      applied.push(renames);
    }
    if (step.context) {
      const state = statePaths(s.value).join(', ');
      try {
        s = { ...s, context: step.context(s.context, { from: v - 1, to: v, state }) };
      } catch (err) {
        throw new MigrationError(bot.id, v - 1, v, stored, err);
      }
    }
  }
  return { snapshot: s, steps, renameId: (id) => applied.reduce((acc, r) => renameId(acc, rootId, r), id) };
}

function renameStates(s: PersistedSnapshot, rootId: string, renames: Readonly<Record<string, string>>): PersistedSnapshot {
  const value = valueFromLeaves(leavesOf(s.value).map((l) => ({ ...l, path: renamePath(l.path, renames) })));
  const historyValue: Record<string, { id: string }[]> = {};
  for (const [k, nodes] of Object.entries(s.historyValue ?? {})) {
    historyValue[renameId(k, rootId, renames)] = nodes.map((n) => ({ ...n, id: renameId(n.id, rootId, renames) }));
  }
  // An inline invocation's child is known by its state node's id (`<id>:invocation[0]`); keep it findable.
  const children: NonNullable<PersistedSnapshot['children']> = {};
  for (const [k, child] of Object.entries(s.children ?? {})) {
    const src = typeof child.src === 'string' ? renameInvocation(child.src, rootId, renames) : child.src;
    children[renameInvocation(k, rootId, renames)] = { ...child, src };
  }
  return { ...s, value, historyValue, children };
}

function renameInvocation(ref: string, rootId: string, renames: Readonly<Record<string, string>>): string {
  const at = ref.indexOf(':invocation[');
  return at < 0 ? ref : renameId(ref.slice(0, at), rootId, renames) + ref.slice(at);
}

/** Drops history entries the machine cannot resolve (XState would warn and skip them on restore). */
export function pruneHistory(machine: AnyStateMachine, snapshot: unknown): unknown {
  const s = snapshot as PersistedSnapshot;
  const known = (id: string) => {
    try {
      machine.getStateNodeById(id);
      return true;
    } catch {
      return false;
    }
  };
  const historyValue: Record<string, { id: string }[]> = {};
  for (const [k, nodes] of Object.entries(s.historyValue ?? {})) {
    const kept = nodes.filter((n) => known(n.id));
    if (known(k) && kept.length) historyValue[k] = kept;
  }
  return { ...s, historyValue };
}

/**
 * A durable timer's key and event after a migration: an `after` delay is known by its state
 * node's id (`xstate.after.<delay>.<id>`), and so is its event's type.
 */
export function renameDelayKey(key: string, rename: (id: string) => string): string {
  if (!key.startsWith('xstate.after.')) return key;
  const rest = key.slice('xstate.after.'.length);
  const dot = rest.indexOf('.');
  return `xstate.after.${rest.slice(0, dot)}.${rename(rest.slice(dot + 1))}`;
}
