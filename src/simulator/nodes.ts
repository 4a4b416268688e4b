/**
 * Static facts about a machine's state nodes, read from XState's own definitions: names, document
 * order, transitions, which events an active configuration handles, and which nodes can be
 * entered or left at all. Shared by `colloquy check` and `colloquy graph`.
 */
import { getStateNodes } from '@xstate/graph';
import type { AnyMachineSnapshot, AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

/** A state node's name: its path below the machine, dotted (`size`, `order.size`). */
export function nodeName(node: AnyStateNode): string {
  return node.path.join('.');
}

/** The state nodes a node contains directly, in document order. */
export function childrenOf(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states);
}

/** Every state node below the root, in document order (each parent before its children). */
export function allNodes(machine: AnyStateMachine): AnyStateNode[] {
  return getStateNodes(machine.root);
}

/** The transitions a node defines itself: `on`, `after`, invoke `onDone`/`onError`, `onDone` and `always`. */
export function ownTransitions(node: AnyStateNode): AnyTransitionDefinition[] {
  return [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
}

/** True when an event descriptor (`reply.small`, `reply.*`, `*`) matches an event type. */
export function matchesDescriptor(descriptor: string, type: string): boolean {
  if (descriptor === type || descriptor === '*') return true;
  return descriptor.endsWith('.*') && type.startsWith(descriptor.slice(0, -1));
}

/** True when `node` is `outer` or lies inside it. */
export function isWithin(node: AnyStateNode, outer: AnyStateNode): boolean {
  for (let n: AnyStateNode | undefined = node; n; n = n.parent) if (n === outer) return true;
  return false;
}

/**
 * True when the active configuration has a transition for the event, whatever its guard; a
 * wildcard (`*`, `reply.*`) counts. A transition with neither target nor actions does not.
 */
export function handles(snapshot: AnyMachineSnapshot, type: string): boolean {
  if (snapshot.status !== 'active') return false;
  return snapshot._nodes.some((n) => [...n.transitions.entries()].some(([descriptor, defs]) => matchesDescriptor(descriptor, type) && defs.some(isLive)));
}

function isLive(t: AnyTransitionDefinition): boolean {
  return t.target !== undefined || t.actions.length > 0;
}

/**
 * True when some transition can take the conversation out of `node`: one of its own, an
 * ancestor's or a descendant's, with a target outside it. A transition back into the node
 * itself does not count: a state that only loops to itself can never be left.
 */
export function canLeave(node: AnyStateNode): boolean {
  const scope: AnyStateNode[] = [...descendantsOf(node)];
  for (let n: AnyStateNode | undefined = node; n; n = n.parent) scope.push(n);
  return scope.some((n) => ownTransitions(n).some((t) => (t.target ?? []).some((target) => !isWithin(target, node))));
}

function descendantsOf(node: AnyStateNode): AnyStateNode[] {
  return childrenOf(node).flatMap((c) => [c, ...descendantsOf(c)]);
}

/**
 * The state nodes the definition can enter, guards aside: the initial configuration, then the
 * targets of every transition of an entered node (with the ancestors a target implies, the
 * initial states it enters, and the other regions of a parallel ancestor).
 */
export function staticallyReachable(machine: AnyStateMachine): Set<AnyStateNode> {
  const seen = new Set<AnyStateNode>();
  const queue: AnyStateNode[] = [];
  const mark = (n: AnyStateNode): void => {
    if (seen.has(n)) return;
    seen.add(n);
    queue.push(n);
  };
  const enterDefault = (n: AnyStateNode): void => {
    if (n.type === 'history') return n.parent ? enterDefault(n.parent) : undefined;
    mark(n);
    if (n.type === 'compound') n.initial.target.forEach(enterTarget);
    if (n.type === 'parallel') childrenOf(n).forEach(enterDefault);
  };
  const enterTarget = (n: AnyStateNode): void => {
    enterDefault(n);
    for (let child = n, a = n.parent; a; child = a, a = a.parent) {
      mark(a);
      if (a.type === 'parallel')
        childrenOf(a)
          .filter((r) => r !== child && !seen.has(r))
          .forEach(enterDefault);
    }
  };
  enterDefault(machine.root);
  for (let n = queue.shift(); n; n = queue.shift()) {
    for (const t of ownTransitions(n)) (t.target ?? []).forEach(enterTarget);
  }
  return seen;
}
