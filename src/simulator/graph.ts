/**
 * `mermaidGraph()`: a bot's conversation as a Mermaid `stateDiagram-v2`. Each state is declared
 * with its name (`state "size" as size`) and carries what it says on entry beneath it
 * (`size : buttons(image) [small, large]`): Mermaid titles a state by its first description when
 * it has no declared name, so without the declaration the name would be lost. Each transition its event
 * (`reply.small`, `flow`, `after 10m`, `done(lookup)`), nested states are composite states, and
 * transitions an ancestor handles for all its states start from an "any state" box.
 */
import { toDirectedGraph, type DirectedGraphNode } from '@xstate/graph';
import type { AnyStateNode, AnyTransitionDefinition } from 'xstate';
import type { Bot } from '../conversation/bot.js';
import { choicesOf, type Message } from '../messages/message.js';
import { variantOf } from '../messages/request.js';
import { childrenOf, nodeName } from './nodes.js';
import { walkBot, type Walk } from './walk.js';

/** Words Mermaid reads as keywords, which cannot be state ids. */
const RESERVED = new Set(['state', 'note', 'end', 'direction', 'class', 'classdef', 'click', 'style', 'as', 'default', 'left', 'right', 'of']);

interface Edge {
  readonly from: AnyStateNode;
  readonly to: AnyStateNode;
  readonly label: string;
}

interface Ctx {
  readonly ids: Map<AnyStateNode, string>;
  readonly notes: Map<string, string[]>;
  readonly edges: readonly Edge[];
  readonly lines: string[];
}

/**
 * Draws a bot as a Mermaid state diagram.
 *
 * @example
 * writeFileSync('order.mmd', mermaidGraph(bot));
 */
export function mermaidGraph(bot: Bot): string {
  const root = bot.machine.root;
  const ids = new Map<AnyStateNode, string>();
  assignIds(root, ids, new Set(['any_state']));
  const ctx: Ctx = { ids, notes: entryNotes(walkBot(bot)), edges: edgesOf(root), lines: ['stateDiagram-v2'] };
  drawContainer(root, 1, ctx);
  return ctx.lines.join('\n') + '\n';
}

/** Mermaid ids: the dotted path with `_` for anything else, unique, never a keyword. */
function assignIds(node: AnyStateNode, ids: Map<AnyStateNode, string>, taken: Set<string>): void {
  for (const child of childrenOf(node)) {
    let id = child.path.join('_').replace(/[^A-Za-z0-9_]/g, '_');
    if (/^[0-9]/.test(id) || RESERVED.has(id.toLowerCase())) id = `s_${id}`;
    let unique = id;
    for (let n = 2; taken.has(unique); n++) unique = `${id}_${n}`;
    taken.add(unique);
    ids.set(child, unique);
    assignIds(child, ids, taken);
  }
}

/** What each state says on entry, as one line per distinct saying. */
function entryNotes(walk: Walk): Map<string, string[]> {
  const notes = new Map<string, string[]>();
  for (const s of walk.sayings) {
    if (s.entryOf === undefined) continue;
    const line = 'messages' in s.said ? s.said.messages.map(summary).join(' + ') : s.guessed ? 'a message built from an actor output' : 'invalid message';
    const list = notes.get(s.entryOf) ?? [];
    if (!list.includes(line)) list.push(line);
    notes.set(s.entryOf, list);
  }
  return notes;
}

/** A message as its variant and choice ids: `buttons(image) [small, large]`. */
export function summary(m: Message): string {
  try {
    const ids = choicesOf(m).map((c) => c.id);
    return ids.length > 0 ? `${variantOf(m)} [${ids.join(', ')}]` : variantOf(m);
  } catch {
    return 'invalid message';
  }
}

/**
 * Every transition as an edge, from `@xstate/graph`'s directed graph of the machine (state nodes
 * in document order, each with its `on`, `after` and done/error transitions). `always`
 * transitions are not in it, so they are added from each node's own list.
 */
function edgesOf(root: AnyStateNode): Edge[] {
  const visit = (g: DirectedGraphNode): Edge[] => {
    const from = g.stateNode as AnyStateNode;
    const own = g.edges.flatMap((e) => edgeOf(from, e.transition, e.target as AnyStateNode));
    const always = (from.always ?? []).flatMap((t) => targetsOf(from, t).map((to) => ({ from, to, label: labelOf(from, t) })));
    return [...own, ...always, ...g.children.flatMap(visit)];
  };
  return visit(toDirectedGraph(root));
}

/** `@xstate/graph` draws a transition without target as a loop, even one that does nothing. */
function edgeOf(from: AnyStateNode, t: AnyTransitionDefinition, target: AnyStateNode): Edge[] {
  if (t.target === undefined) return t.actions.length > 0 && from.parent !== undefined ? [{ from, to: from, label: labelOf(from, t) }] : [];
  const to = target.type === 'history' && target.parent ? target.parent : target;
  return [{ from, to, label: labelOf(from, t) }];
}

/** Where a transition leads: a history state stands for its parent; one with actions but no target loops. */
function targetsOf(from: AnyStateNode, t: AnyTransitionDefinition): AnyStateNode[] {
  if (t.target === undefined) return t.actions.length > 0 && from.parent !== undefined ? [from] : [];
  return t.target.map((target) => (target.type === 'history' && target.parent ? target.parent : target));
}

/** A transition's label: its event, or what stands for it (`after 10m`, `done(lookup)`, `always`), and its guard. */
export function labelOf(node: AnyStateNode, t: AnyTransitionDefinition): string {
  const guard = guardName(t.guard);
  return clean(eventLabel(node, t) + (guard === undefined ? '' : ` [${guard}]`));
}

function eventLabel(node: AnyStateNode, t: AnyTransitionDefinition): string {
  const type = String(t.eventType);
  if (node.always?.includes(t) || type === '') return 'always';
  const after = node.after.find((a) => a.eventType === type);
  if (after) return `after ${typeof after.delay === 'number' ? formatDelay(after.delay) : typeof after.delay === 'string' ? after.delay : 'delay'}`;
  for (const [prefix, word] of [
    ['xstate.done.actor.', 'done'],
    ['xstate.error.actor.', 'error'],
  ] as const) {
    if (!type.startsWith(prefix)) continue;
    const inv = node.invoke.find((i) => i.id === type.slice(prefix.length));
    return `${word}(${typeof inv?.src === 'string' ? inv.src : (inv?.id ?? 'actor')})`;
  }
  return type.startsWith('xstate.done.state.') ? 'done' : type;
}

function guardName(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === 'string') return guard;
  const type = (guard as { type?: unknown }).type;
  return typeof type === 'string' ? type : 'guard';
}

/** A delay in ms as `10m`, `1h`, `30s` or `1500ms`. */
export function formatDelay(ms: number): string {
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** Text safe after a Mermaid `:`. */
function clean(s: string): string {
  return s
    .replace(/[\r\n]+/g, ' ')
    .replace(/[:;]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The inside of the root, a compound or a parallel state: initial arrow, states, transitions. */
function drawContainer(node: AnyStateNode, depth: number, ctx: Ctx): void {
  const pad = '  '.repeat(depth);
  if (node.type === 'compound') for (const t of node.initial.target) ctx.lines.push(`${pad}[*] --> ${ref(t, ctx)}`);
  childrenOf(node).forEach((child, i) => {
    if (node.type === 'parallel' && i > 0) ctx.lines.push(`${pad}--`);
    drawState(child, depth, ctx);
  });
  drawEdges(node, depth, ctx);
}

function drawState(node: AnyStateNode, depth: number, ctx: Ctx): void {
  const pad = '  '.repeat(depth);
  const id = ref(node, ctx);
  const notes = ctx.notes.get(nodeName(node)) ?? [];
  const named = `state "${node.key.replace(/"/g, "'")}" as ${id}`;
  if (node.type === 'compound' || node.type === 'parallel') {
    ctx.lines.push(`${pad}${id === node.key ? `state ${id}` : named} {`);
    drawContainer(node, depth + 1, ctx);
    ctx.lines.push(`${pad}}`);
    if (notes.length > 0) ctx.lines.push(`${pad}note right of ${id} : ${clean(notes.join(' / '))}`);
  } else {
    ctx.lines.push(id === node.key && notes.length === 0 ? `${pad}${id}` : `${pad}${named}`);
    for (const n of notes) ctx.lines.push(`${pad}${id} : ${clean(n)}`);
  }
  if (node.type === 'final') ctx.lines.push(`${pad}${id} --> [*]`);
}

/**
 * The transitions drawn inside a container: those between two of its own children, and (at the
 * root) every other one, since Mermaid links states of different composites only from outside.
 * A transition an ancestor defines for all its states starts from the ancestor's box, or from an
 * "any state" box at the root.
 */
function drawEdges(container: AnyStateNode, depth: number, ctx: Ctx): void {
  const pad = '  '.repeat(depth);
  const isRoot = container.parent === undefined;
  const mine = ctx.edges.filter((e) => (isRoot ? !insideComposite(e) : e.from.parent === container && e.to.parent === container));
  if (isRoot && mine.some((e) => e.from === container)) ctx.lines.push(`${pad}state "any state" as any_state`);
  for (const e of mine) {
    const from = e.from === container ? 'any_state' : ref(e.from, ctx);
    ctx.lines.push(`${pad}${from} --> ${ref(e.to, ctx)} : ${e.label}`);
  }
}

/** True for an edge drawn inside a composite: both ends children of the same state below the root. */
function insideComposite(e: Edge): boolean {
  const parent = e.from.parent;
  return parent?.parent !== undefined && e.to.parent === parent;
}

function ref(node: AnyStateNode, ctx: Ctx): string {
  return ctx.ids.get(node) ?? 'any_state';
}
