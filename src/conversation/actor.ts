/**
 * A conversation's live XState actor during a turn. The actor runs with an inert clock: XState
 * never fires a delay itself; the runtime stores each scheduled delay as a durable timer and sends
 * its event back when it falls due (a persisted snapshot does not carry pending delays).
 */
import { createActor, type AnyActorRef, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import type { Message } from '../messages/message.js';
import type { TimerChanges, TimerSpec } from '../store/types.js';
import type { Bot } from './bot.js';
import { HANDOFF_EVENT, type HandoffOptions, type HandoffRequestEvent } from './handoff.js';
import { SAY_EVENT, type SayEvent } from './say.js';

/** What `say()` produced, with the state it was said in. */
export type Said = { readonly state: string; readonly messages: readonly Message[] } | { readonly state: string; readonly error: unknown };

interface ScheduledEvent {
  readonly source: AnyActorRef;
  readonly target: AnyActorRef;
  readonly event: { type: string };
  readonly delay: number;
  readonly id: string;
}

const inertClock = { setTimeout: () => 0, clearTimeout: () => undefined };

/** A running actor and what it has said, scheduled and cancelled since the last commit. */
export class ActorHandle {
  readonly actor: AnyActorRef;
  readonly said: Said[] = [];
  /** What `handoff()` asked for since the last commit, with the state it was asked in. */
  readonly handoffs: ({ readonly state: string; readonly options: HandoffOptions } | { readonly state: string; readonly error: unknown })[] = [];
  private readonly fireAt = new WeakMap<object, number>();
  private readonly cancelled = new Set<string>();
  /** The error the actor reported (an action threw, a promise rejected with no onError…). */
  error: unknown = undefined;
  private readonly cancelOriginal: (source: AnyActorRef, id: string) => void;
  /** True while the runtime itself is sending an event, so changes outside a turn can be noticed. */
  inTurn = false;
  /** True when the actor changed outside a turn since its snapshot was last taken for a commit. */
  dirty = false;
  private readonly waiters: (() => void)[] = [];

  constructor(
    readonly bot: Bot,
    snapshot: unknown,
    input: unknown,
    onChange: () => void,
  ) {
    const options = snapshot === undefined ? { input } : { snapshot: snapshot as never, input };
    this.actor = createActor(bot.machine as AnyStateMachine, { ...options, clock: inertClock as never });
    this.actor.on(SAY_EVENT, (e: SayEvent) => {
      const state = stateText(this.snapshot.value);
      this.said.push('error' in e ? { state, error: e.error } : { state, messages: e.messages });
    });
    this.actor.on(HANDOFF_EVENT, (e: HandoffRequestEvent) => {
      const state = stateText(this.snapshot.value);
      this.handoffs.push('error' in e ? { state, error: e.error } : { state, options: e.options });
    });
    this.actor.subscribe({
      next: () => {
        this.changed(onChange);
        this.wake();
      },
      error: (err: unknown) => {
        this.error = err;
        this.changed(onChange);
        this.wake();
      },
      complete: () => this.wake(),
    });
    const scheduler = this.actor.system.scheduler as { cancel: (source: AnyActorRef, id: string) => void };
    const cancel = scheduler.cancel.bind(scheduler);
    this.cancelOriginal = cancel;
    scheduler.cancel = (source, id) => {
      if (source === this.actor) this.cancelled.add(id);
      cancel(source, id);
    };
  }

  private changed(onChange: () => void): void {
    if (this.inTurn) return;
    this.dirty = true;
    onChange();
  }

  /** Resolves at the actor's next change: a transition (an invocation settling), an error, its end or its stop. */
  nextChange(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** Starts the actor (running initial entry actions for a new one). */
  start(): void {
    this.within(() => this.actor.start());
  }

  /** Sends an event if the current state can take it; returns whether it did. */
  offer(event: { type: string }): boolean {
    if (!this.snapshot.can(event)) return false;
    this.within(() => this.actor.send(event));
    return true;
  }

  get snapshot(): AnyMachineSnapshot {
    return this.actor.getSnapshot() as AnyMachineSnapshot;
  }

  /** The state as text: `menu`, or `{"order":"size"}` for nested states. */
  get state(): string {
    return stateText(this.snapshot.value);
  }

  /** True while an invoked promise (or other child) is still running. */
  get busy(): boolean {
    // The live children, not getPersistedSnapshot(): that would serialize the whole context again.
    const children = this.snapshot.children as Record<string, AnyActorRef | undefined>;
    return Object.values(children).some((c) => c?.getSnapshot().status === 'active');
  }

  /**
   * Forgets a delay that has fired through the inbox. The inert clock never fires it, so XState
   * would still count it as pending and the next commit would store it again, already due.
   */
  consumeDelay(key: string): void {
    this.cancelOriginal(this.actor, key);
  }

  /** Takes what was said since the last call. */
  takeSaid(): Said[] {
    return this.said.splice(0);
  }

  /** The timer changes since the last call: delays scheduled, delays cancelled, states still active. */
  takeTimers(now: number): TimerChanges {
    const scheduled = Object.values(this.actor.system.getSnapshot()._scheduledEvents) as ScheduledEvent[];
    const upsert: TimerSpec[] = [];
    for (const s of scheduled) {
      if (s.target !== this.actor) continue; // delays to children die with the child; only the root's are durable
      let at = this.fireAt.get(s);
      if (at === undefined) this.fireAt.set(s, (at = now + s.delay));
      upsert.push({ key: s.id, stateNode: afterStateNode(this.bot.machine, s.id), event: s.event, fireAt: at });
    }
    const remove = [...this.cancelled].filter((id) => !upsert.some((u) => u.key === id));
    this.cancelled.clear();
    const activeStateNodes = (this.snapshot as unknown as { _nodes: { id: string }[] })._nodes.map((n) => n.id);
    return { upsert, remove, activeStateNodes };
  }

  /** Puts back what a commit took, when the commit did not happen (the store was unavailable): the next one carries it. */
  giveBack(said: readonly Said[], timers: TimerChanges): void {
    this.said.unshift(...said);
    for (const key of timers.remove) this.cancelled.add(key);
    this.dirty = true;
  }

  /** Lets go of an actor that is no longer used without stopping it: whoever waits for its next change stops waiting. */
  release(): void {
    this.wake();
  }

  stop(): void {
    this.within(() => this.actor.stop());
    this.wake();
  }

  private within(fn: () => void): void {
    const was = this.inTurn;
    this.inTurn = true;
    try {
      fn();
    } finally {
      this.inTurn = was;
    }
  }
}

/** The state value as text. */
export function stateText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** For an `after` delay's id (`xstate.after.<delay>.<stateNodeId>`), the state node that armed it. */
function afterStateNode(machine: AnyStateMachine, id: string): string | null {
  if (!id.startsWith('xstate.after.')) return null;
  const rest = id.slice('xstate.after.'.length);
  const nodeId = rest.slice(rest.indexOf('.') + 1);
  try {
    return machine.getStateNodeById(nodeId).id;
  } catch {
    return null;
  }
}
