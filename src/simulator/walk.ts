/**
 * Walks a bot's machine with `@xstate/graph`'s traversal (`getAdjacencyMap`) over XState's pure
 * `initialTransition()` and `transition()`: every state configuration it can reach, every event it
 * handles (with sample payloads), every guarded branch. Collects what is said on the way and which
 * state nodes were reached. Nothing runs: invoked actors and delays are not started, their done,
 * error and `after` events are sent instead.
 *
 * Why the traversal walks a small logic of its own rather than the machine itself: `@xstate/graph`
 * steps a machine with a mock actor scope whose `emit` drops every emitted event, and a bot's
 * messages are emitted (`say()`), so walking the machine directly would see no message at all. Its
 * default events are also bare `{type}` objects (a `reply.X` builder reading `event.title` would
 * throw) and it takes one branch of a guard, never both. So the walked logic's positions are a
 * machine snapshot plus what was shown on arrival, its moves are "send this event, with these
 * sample payloads, with this guard forced on", and each move is XState's own `transition()`,
 * whose returned actions carry the emitted messages. `@xstate/graph` does the breadth-first
 * traversal, the de-duplication of configurations and the stop at the size limit.
 */
import { getAdjacencyMap } from '@xstate/graph';
import { fromTransition, initialTransition, transition, type AnyEventObject, type AnyMachineSnapshot } from 'xstate';
import type { Bot } from '../conversation/bot.js';
import { SAY_EVENT, type SayEvent } from '../conversation/say.js';
import { HANDOFF_EVENT } from '../conversation/handoff.js';
import { BotError } from '../errors.js';
import { choicesOf, type Choice } from '../messages/message.js';
import { instrument, MARK, type Instrumented, type Mark } from './instrument.js';
import { allNodes, handles, matchesDescriptor, nodeName } from './nodes.js';
import { DONE_ACTOR, SAMPLE_USER, sampleEvents } from './samples.js';

/** One `say()` met on the walk. */
export interface Saying {
  /** The state node whose `entry` said it (`order.size`); undefined when a transition or an exit did. */
  readonly entryOf: string | undefined;
  /** Where the user sees it: the active state(s) once the step is over. */
  readonly shownIn: string;
  /** The snapshot once the step is over: what the conversation can handle next. */
  readonly snapshot: AnyMachineSnapshot;
  readonly said: SayEvent;
  /**
   * True when the path here took an invoked actor's output, which the walk can only guess: a
   * message that failed to build may be the guess's fault.
   */
  readonly guessed: boolean;
}

/** What a walk found. */
export interface Walk {
  /** Everything said, each distinct saying once, in the order met. */
  readonly sayings: readonly Saying[];
  /** Names of the state nodes some reached configuration had active. */
  readonly reached: ReadonlySet<string>;
  /** Where `handoff()` was called: the state it belongs to and the snapshot that must wait for its end. */
  readonly handoffs: readonly HandingOff[];
}

/** One `handoff()` met on the walk. */
export interface HandingOff {
  readonly state: string;
  readonly snapshot: AnyMachineSnapshot;
}

/** How many state configurations a walk expands at most. */
const MAX_CONFIGURATIONS = 2000;

/** A reached configuration of the machine. */
interface Step {
  readonly snapshot: AnyMachineSnapshot;
  /** The choices shown on arrival, to tap even when only a wildcard handles them. */
  readonly shown: readonly Choice[];
  /** True when the path here took a guessed actor output. */
  readonly guessed: boolean;
}

/** Where the walk is: before the machine started, or at a configuration. */
type Position = { readonly at: 'start' } | (Step & { readonly at: 'step' });

/** A move of the walk: start the machine, or send an event (several sample payloads), each with some guards forced on. */
type Move = { readonly type: 'start'; readonly forced: readonly number[] } | { readonly type: 'send'; readonly samples: readonly AnyEventObject[]; readonly forced: readonly number[] };

const START: Position = { at: 'start' };

/** Walks a bot's machine. Throws a BotError when the machine cannot even start. */
export function walkBot(bot: Bot): Walk {
  const walker = new Walker(bot, instrument(bot.machine, bot.options.sampleContext));
  const logic = fromTransition((position: Position, move: Move) => walker.move(position, move), START);
  let expanded = 0;
  getAdjacencyMap(logic, {
    events: (snapshot) => walker.moves(snapshot.context),
    serializeState: (snapshot) => (snapshot.context.at === 'start' ? 'start' : JSON.stringify(snapshot.context.snapshot.value)),
    stopWhen: () => ++expanded > MAX_CONFIGURATIONS,
  });
  return { sayings: walker.sayings, reached: walker.reached, handoffs: walker.handoffs };
}

/** What the walk saw and said, and how it moves. */
class Walker {
  readonly alwaysSwitches: number[];
  readonly events: string[];
  readonly sayings: Saying[] = [];
  readonly handoffs: HandingOff[] = [];
  readonly reached = new Set<string>();
  private readonly said = new Set<string>();

  constructor(
    private readonly bot: Bot,
    readonly inst: Instrumented,
  ) {
    this.alwaysSwitches = switchesOf(
      inst,
      allNodes(inst.machine).flatMap((n) => n.always ?? []),
    );
    this.events = eventTypes(inst);
  }

  /** The moves worth making from a position: start (each `always` guard forced in turn), or every handled event with each relevant guard. */
  moves(position: Position): Move[] {
    if (position.at === 'start') return variants(this.alwaysSwitches).map((forced) => ({ type: 'start', forced }));
    return candidates(position, this.events).flatMap((samples) => {
      const type = samples[0]?.type ?? '';
      const relevant = [...new Set([...switchesFor(this.inst, position.snapshot, type), ...this.alwaysSwitches])];
      return variants(relevant).map((forced): Move => ({ type: 'send', samples, forced }));
    });
  }

  /** Makes a move and keeps what it said and entered; a move no sample survives stays where it was. */
  move(position: Position, move: Move): Position {
    if (move.type === 'start') return this.record(start(this.bot, this.inst, move.forced), false);
    if (position.at === 'start') return position;
    const next = firstClean(this.inst, position.snapshot, move.samples, move.forced);
    const guessed = position.guessed || (move.samples[0]?.type ?? '').startsWith(DONE_ACTOR);
    return next ? this.record(next, guessed) : position;
  }

  private record([snapshot, actions]: readonly [AnyMachineSnapshot, readonly unknown[]], guessed: boolean): Position {
    const { found, entered, handoffs } = readStep(snapshot, actions, guessed);
    this.sayings.push(...found.filter((s) => once(this.said, signature(s))));
    this.handoffs.push(...handoffs.filter((h) => once(this.said, `handoff|${h.state}|${activeName(h.snapshot)}`)));
    for (const name of entered) this.reached.add(name);
    for (const n of snapshot._nodes) if (n.path.length > 0) this.reached.add(nodeName(n));
    const shown = found.flatMap((s) => ('messages' in s.said ? s.said.messages.flatMap(safeChoices) : []));
    return { at: 'step', snapshot, guessed, shown };
  }
}

function start(bot: Bot, inst: Instrumented, forced: readonly number[]): [AnyMachineSnapshot, unknown[]] {
  const input = bot.options.input ? bot.options.input({ botId: bot.id, user: SAMPLE_USER }) : { user: SAMPLE_USER, botId: bot.id };
  setForced(inst, forced);
  try {
    return initialTransition(inst.machine, input);
  } catch (err) {
    throw new BotError(`Bot "${bot.id}": the machine cannot start with sample input: ${err instanceof Error ? err.message : String(err)}`, { bot: bot.id }, { cause: err });
  }
}

/**
 * The step with the first sample payload whose messages all build, else the first that ran: a
 * message is only reported when no sample payload builds it (an invoked actor's output is unknown).
 */
function firstClean(inst: Instrumented, snapshot: AnyMachineSnapshot, samples: readonly AnyEventObject[], forced: readonly number[]): [AnyMachineSnapshot, unknown[]] | null {
  let first: [AnyMachineSnapshot, unknown[]] | null = null;
  for (const event of samples) {
    const next = attempt(inst, snapshot, event, forced);
    if (next === null) continue;
    if (!next[1].some(failedSay)) return next;
    first ??= next;
  }
  return first;
}

function failedSay(action: unknown): boolean {
  const event = emitted(action);
  return event?.type === SAY_EVENT && 'error' in event;
}

/** One transition, or null when an action threw (a sample payload the bot did not expect). */
function attempt(inst: Instrumented, snapshot: AnyMachineSnapshot, event: AnyEventObject, forced: readonly number[]): [AnyMachineSnapshot, unknown[]] | null {
  setForced(inst, forced);
  try {
    const next = transition(inst.machine, snapshot, event);
    return next[0].status === 'error' ? null : next;
  } catch {
    return null;
  }
}

function setForced(inst: Instrumented, forced: readonly number[]): void {
  inst.forced.clear();
  for (const k of forced) inst.forced.add(k);
}

/** No guard on, then each relevant guard on by itself. */
function variants(switches: readonly number[]): number[][] {
  return [[], ...switches.map((k) => [k])];
}

function switchesOf(inst: Instrumented, defs: readonly { guard?: unknown }[]): number[] {
  return defs.flatMap((d) => {
    const key = inst.switches.get(d.guard);
    return key === undefined ? [] : [key];
  });
}

function switchesFor(inst: Instrumented, snapshot: AnyMachineSnapshot, type: string): number[] {
  return snapshot._nodes.flatMap((n) => [...n.transitions.entries()].filter(([d]) => matchesDescriptor(d, type)).flatMap(([, defs]) => switchesOf(inst, defs)));
}

/** Every event type the machine names, in document order; `text` and `flow` too when a wildcard could take them. */
function eventTypes(inst: Instrumented): string[] {
  const descriptors = [inst.machine.root, ...allNodes(inst.machine)].flatMap((n) => [...n.transitions.keys()]);
  const wildcard = descriptors.some((d) => d === '*' || d.endsWith('.*'));
  const types = descriptors.filter((d) => d !== '*' && !d.endsWith('.*') && !d.startsWith('xstate.done.state.'));
  return [...new Set([...types, ...(wildcard ? ['text', 'flow'] : [])])];
}

/** The events worth sending in a step: those the active states handle, each with its sample payloads. */
function candidates(step: Step, types: readonly string[]): AnyEventObject[][] {
  const taps = step.shown.filter((c) => !types.includes(`reply.${c.id}`)).map((c) => `reply.${c.id}`);
  return [...types, ...new Set(taps)].filter((type) => handles(step.snapshot, type)).map((type) => sampleEvents(type, step.shown));
}

/** The sayings in a step's actions, each with the entry it belongs to, and the states entered (from the markers). */
function readStep(snapshot: AnyMachineSnapshot, actions: readonly unknown[], guessed: boolean): { found: Saying[]; entered: string[]; handoffs: HandingOff[] } {
  const shownIn = activeName(snapshot);
  let entryOf: string | undefined;
  const found: Saying[] = [];
  const entered: string[] = [];
  const handoffs: HandingOff[] = [];
  for (const action of actions) {
    const event = emitted(action);
    if (event?.type === MARK) {
      const mark = event as Mark;
      entryOf = mark.at === 'entry' && mark.state !== '' ? mark.state : undefined;
      if (entryOf !== undefined) entered.push(entryOf);
    } else if (event?.type === SAY_EVENT) found.push({ entryOf, shownIn, snapshot, said: event as SayEvent, guessed });
    else if (event?.type === HANDOFF_EVENT) handoffs.push({ state: entryOf ?? shownIn, snapshot });
  }
  return { found, entered, handoffs };
}

function emitted(action: unknown): { type: string } | undefined {
  const a = action as { type?: unknown; params?: { event?: { type?: unknown } } };
  return a.type === 'xstate.emit' && typeof a.params?.event?.type === 'string' ? (a.params.event as { type: string }) : undefined;
}

/** The active atomic (or final) states, by name: `order.size`, or `a.x, b.y` in parallel regions. */
export function activeName(snapshot: AnyMachineSnapshot): string {
  return snapshot._nodes
    .filter((n) => n.type === 'atomic' || n.type === 'final')
    .map(nodeName)
    .join(', ');
}

function signature(s: Saying): string {
  const what = 'messages' in s.said ? JSON.stringify(s.said.messages) : `error:${String(s.said.error)}`;
  return `${s.entryOf ?? ''}|${s.shownIn}|${s.guessed}|${what}`;
}

function safeChoices(m: unknown): Choice[] {
  try {
    return choicesOf(m as never);
  } catch {
    return [];
  }
}

function once(set: Set<string>, key: string): boolean {
  if (set.has(key)) return false;
  set.add(key);
  return true;
}
