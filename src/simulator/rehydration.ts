/**
 * Rehydration checks: a bot must behave the same whether its machine runs alone in memory or its
 * conversation is saved to the store and loaded again between steps. The runtime keeps the
 * snapshot as JSON and re-creates the actor from it at every turn, so a Date, Map, Set, class
 * instance or function in context, or a delay or invocation that does not survive a restart, shows
 * up here as a step where the runs disagree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, SimulatedClock, type AnyStateMachine } from 'xstate';
import type { Bot } from '../conversation/bot.js';
import { MANUAL_CLOCK_START, ManualClock } from '../conversation/clock.js';
import { stateText } from '../conversation/actor.js';
import { Runtime } from '../conversation/runtime.js';
import { SAY_EVENT, type SayEvent } from '../conversation/say.js';
import { silentLogger, type Logger } from '../log.js';
import type { Message } from '../messages/message.js';
import { SANDBOX_SENDER } from '../sandbox/constants.js';
import { startSandbox, type RunningSandbox } from '../sandbox/server.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/types.js';
import { createHttpAdapter } from '../transport/adapter.js';
import { parseDuration } from './harness-duration.js';
import { ExpectationError } from './harness-expect.js';
import { DEFAULT_TEST_USER } from './harness-world.js';
import { findMismatch, stepLabel } from './rehydration-diff.js';
import { migratedSnapshot, seedConversation, type OlderConversation } from './seed.js';
import type { MemoryRun, RehydrationRuns, RehydrationStep, StoreRun } from './rehydration-types.js';

export type { MemoryRun, RehydrationRuns, RehydrationStep, StoreRun } from './rehydration-types.js';

/** Options of {@link runInMemory} (and of the other two). */
export interface RehydrationOptions {
  /** The user's number (default `15551230001`). */
  readonly user?: string | undefined;
  /**
   * States in which an invoked actor runs (a lookup): after each step the run waits, up to 2 s of
   * real time, while the conversation is in one of them. State values as text (`'tracking'`).
   */
  readonly busy?: readonly string[] | undefined;
  /** Where the simulated clock starts (default 2026-01-01 12:00 UTC). */
  readonly now?: number | Date | undefined;
  /**
   * Make `Date.now()` follow each run's simulated clock while it runs (default true), so a bot
   * that stamps ids or times with it acts the same in all three runs.
   */
  readonly pinDateNow?: boolean | undefined;
  /**
   * Start from a conversation an older version of the bot stored (its snapshot and version), to
   * test a migration: the machine alone starts from the migrated snapshot; the store runs start
   * from the stored one, which the runtime migrates at the first step.
   */
  readonly from?: OlderConversation | undefined;
}

/** Options of {@link runThroughStore}. */
export interface StoreRunOptions extends RehydrationOptions {
  /** A new runtime and store connection before every step (true), or one for all steps (false). */
  readonly restart: boolean;
  /** Where the runtime logs (default nowhere). */
  readonly logger?: Logger | undefined;
}

/** Options of {@link checkRehydration}. */
export type CheckRehydrationOptions = Omit<StoreRunOptions, 'restart'>;

/** What {@link checkRehydration} throws: the runs, and the index of the step where they disagree. */
export class RehydrationMismatchError extends ExpectationError {
  override name = 'RehydrationMismatchError';
  constructor(
    message: string,
    readonly step: number | undefined,
    readonly runs: RehydrationRuns,
  ) {
    super(message);
  }
}

const tick = () => new Promise((r) => setImmediate(r));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/**
 * Runs the bot's machine alone: one XState actor, never persisted, on XState's simulated clock,
 * with the input the runtime would give it. A flow answer carries the token `ft_memory`.
 */
export async function runInMemory(bot: Bot, steps: readonly RehydrationStep[], options: RehydrationOptions = {}): Promise<MemoryRun> {
  const clock = new SimulatedClock();
  const t0 = options.now === undefined ? MANUAL_CLOCK_START : +options.now;
  return withDateNow(
    options,
    () => t0 + clock.now(),
    () => memoryRun(bot, steps, options, clock),
  );
}

async function memoryRun(bot: Bot, steps: readonly RehydrationStep[], options: RehydrationOptions, clock: SimulatedClock): Promise<MemoryRun> {
  const key = { user: options.user ?? DEFAULT_TEST_USER, botId: bot.id };
  const busy = options.busy ?? [];
  const input = bot.options.input ? bot.options.input(key) : key;
  const actor = createActor(bot.machine as AnyStateMachine, options.from ? { input, clock, snapshot: migratedSnapshot(bot, options.from) as never } : { input, clock });
  let failure: { error: unknown } | undefined;
  actor.subscribe({
    error: (error: unknown) => {
      failure ??= { error };
    },
  });
  let current: Message[] = [];
  actor.on(SAY_EVENT, (e: SayEvent) => {
    if ('messages' in e) current.push(...e.messages);
  });
  actor.start();
  const said: Message[][] = [];
  const states: string[] = [];
  const contexts: unknown[] = [];
  for (const [i, s] of steps.entries()) {
    if ('advance' in s) clock.increment(parseDuration(s.advance));
    else actor.send(('flow' in s ? { type: 'flow', token: 'ft_memory', data: s.flow } : s.event) as never);
    await tick(); // an invoked promise settles
    for (let w = 0; w < 100 && busy.includes(stateText(actor.getSnapshot().value)); w++) await sleep(20);
    if (failure) throw new ExpectationError(`steps[${i}], ${stepLabel(s)}: the machine alone failed: ${errorText(failure.error)}`);
    said.push(json(current));
    current = [];
    states.push(stateText(actor.getSnapshot().value));
    contexts.push(actor.getSnapshot().context);
  }
  const context = json(actor.getSnapshot().context) as unknown;
  actor.stop();
  return { said, states, contexts, context };
}

/**
 * Runs the steps through the real runtime on a SQLite file (in a temporary folder, removed at the
 * end) with the sandbox provider on 127.0.0.1; with `restart`, a new runtime and store connection
 * before every step, so every turn starts from what the store kept.
 */
export async function runThroughStore(bot: Bot, steps: readonly RehydrationStep[], options: StoreRunOptions): Promise<StoreRun> {
  const clock = new ManualClock(options.now === undefined ? undefined : +options.now);
  return withDateNow(
    options,
    () => clock.now(),
    () => storeRun(bot, steps, options, clock),
  );
}

async function storeRun(bot: Bot, steps: readonly RehydrationStep[], options: StoreRunOptions, clock: ManualClock): Promise<StoreRun> {
  const key = { botId: bot.id, user: options.user ?? DEFAULT_TEST_USER };
  const busy = options.busy ?? [];
  const dir = mkdtempSync(join(tmpdir(), 'colloquy-rehydration-'));
  const path = join(dir, 'colloquy.db');
  let server: RunningSandbox | undefined;
  let r: OpenRuntime | undefined;
  const last = async (o: OpenRuntime) => (await o.store.conversations(key)).at(-1);
  try {
    const s = (server = await startSandbox({ port: 0, host: '127.0.0.1' }));
    const open = () => openRuntime(bot, path, s, clock, options.logger ?? silentLogger);
    if (options.from) {
      const seed = await openStore(path);
      try {
        await seedConversation(seed, key, options.from, clock.now());
      } finally {
        await seed.close();
      }
    }
    r = await open();
    const said: Message[][] = [];
    const states: (string | null)[] = [];
    const contexts: unknown[] = [];
    let seen = 0;
    let n = 0;
    for (const [i, step] of steps.entries()) {
      if (options.restart) {
        await r.close();
        r = await open();
      }
      if ('advance' in step) {
        clock.advance(parseDuration(step.advance));
        await r.runtime.poke();
      } else {
        const event = 'flow' in step ? { type: 'flow', token: await flowToken(r.store, key, i, step), data: step.flow } : step.event;
        await r.runtime.receive({ ...key, providerId: `wamid.rehydrate${++n}`, source: 'whatsapp', event });
      }
      await r.settle();
      for (let w = 0; w < 100 && busy.length > 0 && busy.includes((await last(r))?.state ?? ''); w++) {
        await sleep(20);
        await r.settle();
      }
      const out = (await r.runtime.transcript(key)).flatMap((e) => (e.direction === 'out' ? [e.record.message as Message] : []));
      said.push(json(out.slice(seen)));
      seen = out.length;
      const conv = await last(r);
      states.push(conv?.state ?? null);
      contexts.push((conv?.snapshot as { context?: unknown } | null | undefined)?.context);
    }
    await r.close();
    r = await open(); // read the end from a fresh connection
    const conv = await last(r);
    await r.close();
    if (!conv) throw new ExpectationError('Through the store: no conversation was started.');
    const final = { state: conv.state, status: conv.status, context: (conv.snapshot as { context?: unknown } | null)?.context };
    const requests = s.sandbox.messagesTo(key.user).map((m) => JSON.parse(JSON.stringify(m.request).replace(/ft_[A-Za-z0-9_-]+/g, 'ft_*')) as unknown);
    return { said, states, contexts, final, requests };
  } finally {
    await r?.close().catch(() => undefined); // closing twice is a no-op
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the steps three ways (the machine alone in memory, through the store with one runtime, and
 * through the store with a new runtime at every step) and throws a {@link RehydrationMismatchError}
 * naming the first step where they disagree on the state, on what the bot said (a step marked
 * `reprompts: i` must say what `steps[i]` said) or on the context, then on the end (state and
 * context read from a fresh connection, the provider requests of the two store runs). Returns the
 * runs. `Date.now()` follows each run's simulated clock while it runs (`pinDateNow: false` to
 * leave it alone).
 *
 * @example
 * await checkRehydration(pizza, [
 *   { event: { type: 'text', text: 'hi', via: 'whatsapp' } },
 *   { event: { type: 'reply.margherita', id: 'margherita', title: 'Margherita', via: 'list' } },
 *   { advance: '5m' },
 * ]);
 */
export async function checkRehydration(bot: Bot, steps: readonly RehydrationStep[], options: CheckRehydrationOptions = {}): Promise<RehydrationRuns> {
  steps.forEach((s, i) => {
    const r = 'event' in s ? s.reprompts : undefined;
    if (r !== undefined && !(Number.isInteger(r) && r >= 0 && r < i)) throw new Error(`steps[${i}].reprompts must be the index of an earlier step (got ${r})`);
  });
  const memory = await runInMemory(bot, steps, options);
  const straight = await runThroughStore(bot, steps, { ...options, restart: false });
  const restarted = await runThroughStore(bot, steps, { ...options, restart: true });
  const runs = { memory, straight, restarted };
  const mismatch = findMismatch(steps, runs);
  if (mismatch) throw new RehydrationMismatchError(mismatch.message, mismatch.step, runs);
  return runs;
}

/** Runs `fn` with `Date.now()` reading `now`, and puts the real one back afterwards. */
async function withDateNow<T>(options: RehydrationOptions, now: () => number, fn: () => Promise<T>): Promise<T> {
  if (options.pinDateNow === false) return fn();
  const real = Date.now;
  Date.now = now;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

// ── one runtime on the SQLite file ─────────────────────────────────────────────────────────

interface OpenRuntime {
  readonly store: Store;
  readonly runtime: Runtime;
  settle(): Promise<void>;
  close(): Promise<void>;
}

async function openRuntime(bot: Bot, path: string, server: RunningSandbox, clock: ManualClock, logger: Logger): Promise<OpenRuntime> {
  const store = await openStore(path);
  const adapter = createHttpAdapter({
    baseUrl: server.url,
    authUrl: server.url,
    clientId: server.sandbox.clientId,
    clientSecret: server.sandbox.clientSecret,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
  });
  const runtime = new Runtime({ store, adapter, bots: [bot], sender: SANDBOX_SENDER, clock, logger, sends: { baseDelayMs: 1000 } });
  let closed: Promise<void> | undefined;
  const close = () =>
    (closed ??= (async () => {
      await runtime.stop();
      await adapter.close();
      await store.close();
    })());
  const settle = async () => {
    await runtime.idle();
    await tick();
    await runtime.idle();
  };
  try {
    await runtime.start();
    await settle();
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
  return { store, runtime, settle, close };
}

async function flowToken(store: Store, key: { botId: string; user: string }, i: number, s: RehydrationStep): Promise<string> {
  const conv = await store.activeConversation(key);
  if (!conv) throw new ExpectationError(`steps[${i}], ${stepLabel(s)}: there is no conversation to answer the flow of (it has not started or has ended).`);
  return conv.flowToken;
}
