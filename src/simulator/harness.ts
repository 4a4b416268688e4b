/**
 * The test harness: drive a bot in-process with the real runtime, store and sandbox, act as a
 * user (tap, type, submit a flow, answer by SMS, let time pass) and assert on what the bot sent.
 */
import type { Bot } from '../conversation/bot.js';
import type { ManualClock } from '../conversation/clock.js';
import { replyEvent } from '../conversation/events.js';
import type { FlowReply, FlowRequest } from '../conversation/flow-wire.js';
import type { Runtime } from '../conversation/runtime.js';
import type { Sandbox } from '../sandbox/api.js';
import type { ConversationRecord, HandoffRecord, InboundSource, Store, TranscriptEntry } from '../store/types.js';
import { text as textMessage, type Message } from '../messages/index.js';
import { advanceInSteps } from './harness-clock.js';
import { parseDuration, type Duration } from './harness-duration.js';
import * as checks from './harness-expect.js';
import { renderedTemplate } from './cloud-sandbox.js';
import { collectSent, isTappableSent, type SentFlow, type SentMessage } from './harness-sent.js';
import { TestFlow } from './harness-flow.js';
import { DEFAULT_TEST_USER, HarnessWorld, type TestBotOptions, type WorldView } from './harness-world.js';
import { sentLine } from './transcript-lines.js';
import { actionLabel, type AgentAction, type RawEvent, type TranscriptAction, type TranscriptStep } from './transcript-format.js';

/** How long {@link TestConversation.settled} waits for invocations by default (real time). */
const DEFAULT_SETTLE_TIMEOUT_MS = 10_000;

/**
 * Starts a bot on the real runtime (`:memory:` store, manual clock, sandbox over HTTP on
 * 127.0.0.1) and returns the conversation of one user. Nothing is sent until the user acts:
 * `await conv.type('hi')` starts the conversation. Call `close()` when done.
 *
 * @example
 * const conv = await createTestBot(pizzaBot);
 * await conv.type('hi');
 * conv.expectSent({ kind: 'list', choices: ['Margherita', 'Pepperoni'] });
 * await conv.tap('Margherita');
 * conv.expectState('size');
 * await conv.close();
 */
export async function createTestBot(bot: Bot, options: TestBotOptions = {}): Promise<TestConversation> {
  const world = await HarnessWorld.start(bot, options);
  return TestConversation.open(world, options.user ?? DEFAULT_TEST_USER);
}

/** One user's conversation with a bot under test. Actions wait until the bot is done answering. */
export class TestConversation implements WorldView {
  #sent: SentMessage[] = [];
  #mark = 0;
  /** Where the previous action's report ended: what arrives after it (an invocation's result) belongs to the next. */
  #end = 0;
  #record: ConversationRecord | undefined;
  #handoff: HandoffRecord | undefined;
  #lastAction = '(none yet)';
  /** True when an invocation was still running as the previous action ended. */
  #invokingAtEnd = false;
  readonly #steps: TranscriptStep[] = [];
  readonly #others: Map<string, TestConversation>;

  private constructor(
    private readonly world: HarnessWorld,
    readonly user: string,
    others: Map<string, TestConversation>,
  ) {
    this.#others = others;
  }

  /** @internal The conversation of `user` in `world` (one object per user). */
  static open(world: HarnessWorld, user: string, others = new Map<string, TestConversation>()): TestConversation {
    const known = others.get(user);
    if (known) return known;
    const conv = new TestConversation(world, user, others);
    others.set(user, conv);
    world.views.add(conv);
    return conv;
  }

  /** Another user's conversation with the same bot, runtime, clock and sandbox. */
  forUser(user: string): TestConversation {
    return TestConversation.open(this.world, user, this.#others);
  }

  // ── acting ──────────────────────────────────────────────────────────────────────────────

  /** Taps a button or list row of the last interactive message, or a template's quick reply (by payload), by id or title (ignoring case). */
  async tap(idOrTitle: string): Promise<void> {
    const { choice, message } = checks.choiceOrThrow(this.view(), idOrTitle);
    // A template's quick reply arrives as a `button` message with the payload (`via: 'template'`).
    const via = message.kind === 'list' ? 'list' : message.kind === 'template' ? 'template' : 'button';
    await this.act({ tap: idOrTitle }, () => this.receive('whatsapp', { ...replyEvent(choice.id, choice.title, via) }));
  }

  /** Types text on WhatsApp. */
  async type(text: string): Promise<void> {
    await this.act({ type: text }, () => this.receive('whatsapp', { type: 'text', text, via: 'whatsapp' }));
  }

  /** Submits the flow with these answers, with the conversation's flow token. */
  async submitFlow(data: Record<string, unknown>): Promise<void> {
    const token = this.#record?.status === 'active' ? this.#record.flowToken : undefined;
    if (token === undefined) throw new checks.ExpectationError(`Cannot submit a flow: the conversation has not started or has ended.\n${checks.whatWasSent(this.view())}`);
    await this.act({ flow: data }, () => this.receive('whatsapp', { type: 'flow', token, data }));
  }

  /**
   * Opens the live flow (`flow_action: "data_exchange"`) the bot sent last, with the conversation's
   * flow token, as WhatsApp does when the user taps its button (`INIT`), and returns it to walk
   * screen by screen. Throws when the bot sent no flow, or its last flow is a navigate flow
   * (answer that with `submitFlow()`).
   */
  async openFlow(): Promise<TestFlow> {
    const sent = this.#sent.findLast((s): s is SentFlow => s.kind === 'flow');
    if (sent === undefined) throw new checks.ExpectationError(`Cannot open a flow: the bot sent none.\n${checks.whatWasSent(this.view())}`);
    const { flow_action: action, flow_id: flowId } = sent.flow.action.parameters;
    if (action !== 'data_exchange') throw new checks.ExpectationError(`Cannot open flow ${flowId} at the Flow endpoint: it is a ${action} flow (its screens are fixed); answer it with submitFlow()`);
    if (sent.channel === 'sms') throw new checks.ExpectationError(`Cannot open flow ${flowId}: it went by SMS, so it has no button to open it`);
    const token = this.#record?.status === 'active' ? this.#record.flowToken : undefined;
    if (token === undefined) throw new checks.ExpectationError(`Cannot open flow ${flowId}: the conversation has ended.\n${checks.whatWasSent(this.view())}`);
    const flow = new TestFlow({ exchange: (req, label, completion) => this.flowExchange(req, label, completion) }, token, flowId);
    await flow.open();
    return flow;
  }

  /**
   * Sends one decrypted Flow endpoint request as is (a `ping`, an error notification, a token of
   * your own) through the runtime, waits for what it committed, and returns the answer. Unlike a
   * {@link TestFlow}'s actions, a completing answer here delivers no `nfm_reply`.
   */
  flowRequest(req: FlowRequest): Promise<FlowReply> {
    return this.flowExchange(req, `the Flow request ${req.action}${req.screen === undefined ? '' : ` on ${req.screen}`}`);
  }

  /** @internal Answers a Flow request for a {@link TestFlow} (or {@link flowRequest}). */
  async flowExchange(req: FlowRequest, label: string, completion?: (reply: FlowReply) => Record<string, unknown> | undefined): Promise<FlowReply> {
    const { world } = this;
    await world.runtime.idle();
    const reply = await world.runtime.flows.handle(req);
    await world.settle();
    const data = completion?.(reply);
    if (data !== undefined && req.flow_token !== undefined) {
      const token = req.flow_token;
      // What the submit said and what the nfm_reply runs are one step: WhatsApp sends the reply right after.
      await this.act({ flow: data }, () => this.receive('whatsapp', { type: 'flow', token, data }));
      return reply;
    }
    this.#mark = this.#end;
    this.#end = world.lastSeq();
    this.#lastAction = label;
    return reply;
  }

  /** Answers by SMS (after a message went by SMS, "1" or a title picks a choice). */
  async sms(text: string): Promise<void> {
    await this.act({ sms: text }, () => this.receive('sms', { type: 'text', text, via: 'sms' }));
  }

  /** Sends a raw event, as is (default source `whatsapp`). */
  async send(event: RawEvent, source: 'whatsapp' | 'sms' | 'api' = 'whatsapp'): Promise<void> {
    await this.act(source === 'whatsapp' ? { send: event } : { send: event, source }, () => this.receive(source, event));
  }

  /**
   * Lets time pass (`10m`, `2h`, or milliseconds) as if it did: the clock stops at each due time
   * within it (a delay, a send's retry, an idle claim's deadline, one exactly at the end too), where
   * what fell due runs and settles, so what it arms in turn fires as well when it falls within.
   * Throws when something keeps re-arming itself without end.
   */
  async advance(duration: Duration): Promise<void> {
    const ms = parseDuration(duration);
    const { clock, runtime, store, bot } = this.world;
    await this.act({ advance: duration }, async () => {
      await advanceInSteps({ clock, runtime, store, botId: bot.id }, ms);
      return undefined;
    });
  }

  /**
   * Waits until this conversation's invoked actors (an order lookup) have settled and what they
   * did is committed and sent; then `latest` holds their answer. Recorded as a step of its own,
   * so a replayed transcript waits at the same place. Throws when they are still running after
   * `timeoutMs` (default 10 s of real time).
   *
   * @example
   * await chat.tap('Track my order');   // the state invokes a lookup
   * await chat.settled();
   * chat.expectText(/on its way/);
   */
  async settled(options: { readonly timeoutMs?: number | undefined } = {}): Promise<void> {
    await this.act({ settle: true }, async () => {
      await this.untilInvocationsSettle(options.timeoutMs);
      return undefined;
    });
  }

  /** True while an invoked actor of this conversation is still running. */
  get invoking(): boolean {
    return this.world.runtime.invoking(this.key);
  }

  /** @internal Waits for this conversation's invocations (bounded, unless `Infinity`), without recording a step. */
  async untilInvocationsSettle(timeoutMs = DEFAULT_SETTLE_TIMEOUT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      if (timeoutMs === Infinity) return;
      timer = setTimeout(
        () => reject(new checks.ExpectationError(`The invocations of state ${this.state ?? '(none)'} were still running after ${timeoutMs} ms (real time).\n${checks.whatWasSent(this.view())}`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.world.runtime.invocationsSettled(this.key), timeout]);
    } finally {
      clearTimeout(timer);
    }
    await this.world.settle();
  }

  /** Acts as an agent of the handoff desk (`claim()`, `reply()`, `release()`), as the agents' HTTP API does. */
  agent(name = 'agent'): TestAgent {
    return new TestAgent(this, name);
  }

  /** @internal Runs an agent's action and records it as a step, like the user's actions. */
  async agentAct(action: AgentAction, run: () => Promise<unknown>): Promise<void> {
    const mark = this.#end;
    let error: string | undefined;
    try {
      await run();
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    await this.world.settle();
    this.#mark = mark;
    this.#end = this.world.lastSeq();
    this.#lastAction = actionLabel(action);
    this.#steps.push({ action, sent: this.latest.map(sentLine), state: this.state ?? null, ...(error !== undefined && { error }) });
    if (error !== undefined) throw new checks.ExpectationError(`${this.#lastAction} was refused: ${error}`);
  }

  // ── reading ─────────────────────────────────────────────────────────────────────────────

  /** Everything the bot sent to this user, oldest first. */
  get sent(): readonly SentMessage[] {
    return this.#sent;
  }

  /** What the bot sent since this user's last action. */
  get latest(): readonly SentMessage[] {
    return this.#sent.filter((s) => s.seq > this.#mark);
  }

  /** The last message sent. */
  get last(): SentMessage | undefined {
    return this.#sent.at(-1);
  }

  /** The last list, buttons, flow or template message sent (whatever channel it went by): what a tap answers. */
  get lastInteractive(): SentMessage | undefined {
    return this.#sent.findLast(isTappableSent);
  }

  /** The state value as text (`"menu"`, `{"order":"size"}`), of the latest conversation. */
  get state(): string | undefined {
    return this.#record?.state ?? undefined;
  }

  /** The machine's context, from the stored snapshot. */
  get context(): unknown {
    return (this.#record?.snapshot as { context?: unknown } | null | undefined)?.context;
  }

  /** The conversation's open handoff (waiting for or claimed by an agent), if any. */
  get handoff(): HandoffRecord | undefined {
    return this.#handoff;
  }

  /** The stored conversation (the active one, or the latest that ended). */
  get conversation(): ConversationRecord | undefined {
    return this.#record;
  }

  /** The sandbox provider this harness sends to: inject faults with `sandbox.faults`. */
  get sandbox(): Sandbox {
    return this.world.sandbox;
  }

  /** The runtime running the bot. */
  get runtime(): Runtime {
    return this.world.runtime;
  }

  /** The store (`:memory:` SQLite unless the `database` option named another): conversations, inbox, outbox, timers. */
  get store(): Store {
    return this.world.store;
  }

  /** The manual clock (prefer `advance()`, which also fires timers and waits). */
  get clock(): ManualClock {
    return this.world.clock;
  }

  /** The bot under test. */
  get bot(): Bot {
    return this.world.bot;
  }

  /** The steps so far: each action, what the bot sent in answer, and the state after it. */
  get steps(): readonly TranscriptStep[] {
    return this.#steps;
  }

  /** Both directions of the latest conversation, from the store, with delivery results. */
  transcript(): Promise<TranscriptEntry[]> {
    return this.world.runtime.transcript({ botId: this.world.bot.id, user: this.user });
  }

  // ── asserting ───────────────────────────────────────────────────────────────────────────

  /** Throws unless the conversation is in this state. */
  expectState(state: string | Record<string, unknown>): this {
    checks.expectState(this.view(), state);
    return this;
  }

  /** Throws unless a message sent since the last action matches (kind, text, choices). */
  expectSent(match: checks.SentMatch): this {
    checks.expectSent(this.view(), match);
    return this;
  }

  /** Throws unless the last interactive message shows exactly these choices (ids or titles). */
  expectChoices(choices: readonly string[]): this {
    checks.expectChoices(this.view(), choices);
    return this;
  }

  /** Throws if the bot sent anything since the last action. */
  expectNothingSent(): this {
    checks.expectNothingSent(this.view());
    return this;
  }

  /** Throws unless a message sent since the last action shows this text. */
  expectText(text: string | RegExp): this {
    checks.expectText(this.view(), text);
    return this;
  }

  /**
   * Throws unless the conversation is handed to a person (and matches: reason, queue, `waiting` or
   * `claimed`, the agent holding it). Returns the handoff.
   */
  expectHandoff(match: HandoffMatch = {}): HandoffRecord {
    const h = this.#handoff;
    const fail = (why: string): never => {
      throw new checks.ExpectationError(`Expected a handoff after ${this.#lastAction}${why}\nState: ${this.state ?? '(none)'}`);
    };
    if (!h) return fail(', but the conversation is not handed over to a person');
    if (match.status !== undefined && h.state !== match.status) fail(` that is ${match.status}, but it is ${h.state}`);
    if (match.queue !== undefined && h.queue !== match.queue) fail(` in queue ${JSON.stringify(match.queue)}, but its queue is ${JSON.stringify(h.queue)}`);
    if (match.agent !== undefined && h.agent !== match.agent) fail(` held by ${JSON.stringify(match.agent)}, but it is held by ${JSON.stringify(h.agent)}`);
    if (match.reason !== undefined && !(typeof match.reason === 'string' ? h.reason === match.reason : match.reason.test(h.reason ?? ''))) {
      fail(` with reason ${String(match.reason)}, but its reason is ${JSON.stringify(h.reason)}`);
    }
    return h;
  }

  /** Throws if the conversation is handed over to a person. */
  expectNoHandoff(): this {
    const h = this.#handoff;
    if (h) throw new checks.ExpectationError(`Expected no handoff after ${this.#lastAction}, but one is ${h.state}${h.agent ? ` by ${h.agent}` : ''} (reason ${JSON.stringify(h.reason)})`);
    return this;
  }

  /** Stops the runtime and frees everything (every user's conversation of this harness). */
  close(): Promise<void> {
    return this.world.close();
  }

  /** @internal Re-reads what was sent and the conversation after an action. */
  async refresh(): Promise<void> {
    const key = this.key;
    const sandbox = this.world.sandbox;
    this.#sent = await collectSent(this.world.store, this.user, sandbox.messages, this.#sent, (m) => renderedTemplate(sandbox, m));
    this.#record = (await this.world.store.activeConversation(key)) ?? (await this.world.store.conversations(key)).at(-1);
    this.#handoff = this.#record ? await this.world.store.openHandoff(this.#record.id) : undefined;
  }

  private view(): checks.ExpectView {
    return { latest: this.latest, lastInteractive: this.lastInteractive, state: this.state, lastAction: this.#lastAction };
  }

  private get key(): { botId: string; user: string } {
    return { botId: this.world.bot.id, user: this.user };
  }

  /** Runs an inbound through the runtime; resolves to its inbox id. */
  private async receive(source: InboundSource, event: RawEvent): Promise<number> {
    const { world } = this;
    const providerId = world.nextProviderId();
    const raw = source === 'whatsapp' ? world.inboundRaw(this.user, providerId) : undefined;
    return (await world.runtime.receive({ botId: world.bot.id, user: this.user, providerId, source, event, ...(raw !== undefined && { raw }) })).inboxId;
  }

  /** Does an action, waits for the bot, and records the step (with what it answered and the state after). */
  private async act(action: TranscriptAction, run: () => Promise<number | undefined>): Promise<void> {
    const { world } = this;
    const mark = this.#end;
    await world.runtime.idle();
    // The user waited (in real time) for invocations that ran as the previous action ended: a replay must wait too.
    const waited = !('settle' in action) && this.#invokingAtEnd && !this.invoking;
    const inboxId = await run();
    await world.settle();
    this.#mark = mark;
    this.#end = world.lastSeq();
    this.#invokingAtEnd = this.invoking;
    this.#lastAction = actionLabel(action);
    const inbound = inboxId === undefined ? undefined : await world.store.inbound(inboxId);
    const error = inbound?.state === 'failed' ? (inbound.error ?? 'unknown error') : undefined;
    this.#steps.push({ action, sent: this.latest.map(sentLine), state: this.state ?? null, ...(waited && { waited: true as const }), ...(error !== undefined && { error }) });
    if (error !== undefined) throw new BotTurnError(`The bot failed handling ${this.#lastAction}: ${error}\n${checks.whatWasSent(this.view())}`);
  }
}

/** What {@link TestConversation.expectHandoff} checks. */
export interface HandoffMatch {
  readonly reason?: string | RegExp | undefined;
  readonly queue?: string | undefined;
  readonly status?: 'waiting' | 'claimed' | undefined;
  readonly agent?: string | undefined;
}

/**
 * An agent of the handoff desk, in a test: claims the conversation's handoff, writes to the user
 * (through the same outbox and channels as the bot) and releases it. Each action waits until the
 * bot is done, like the user's; a refused action (409, 400) throws with the reason.
 */
export class TestAgent {
  constructor(
    private readonly conv: TestConversation,
    readonly name: string,
  ) {}

  /** Claims the handoff. */
  claim(): Promise<void> {
    return this.conv.agentAct({ agent: this.name, claim: true }, async () => this.conv.runtime.handoffs.claim(this.id(), this.name));
  }

  /** Writes to the user: text, or a message built with the builders (`buttons({...})`). */
  reply(message: string | Message, idempotencyKey?: string): Promise<void> {
    const m = typeof message === 'string' ? textMessage(message) : message;
    const shown = typeof message === 'string' ? message : (message as unknown as Record<string, unknown>);
    return this.conv.agentAct({ agent: this.name, reply: shown }, async () => this.conv.runtime.handoffs.send(this.id(), this.name, m, idempotencyKey));
  }

  /** Releases the handoff: the machine receives `handoff.ended` `{ by, note }`. */
  release(note?: string): Promise<void> {
    return this.conv.agentAct({ agent: this.name, release: note ?? true }, async () => this.conv.runtime.handoffs.release(this.id(), this.name, note));
  }

  private id(): number {
    const id = this.conv.conversation?.id;
    if (id === undefined) throw new checks.ExpectationError('No conversation yet: the user has not written');
    return id;
  }
}

/** Thrown by an action when the bot's turn failed (an action threw, a message broke a limit). */
export class BotTurnError extends Error {
  override name = 'BotTurnError';
}
