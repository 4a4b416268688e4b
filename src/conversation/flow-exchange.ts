/**
 * The Flow endpoint's decrypted half: one request of a live WhatsApp Flow (`ping`, `INIT`, `BACK`,
 * `data_exchange`) answered from the conversation that sent the flow. The token names the
 * conversation and its current flow; the state that sent it declares the answers (`options.flows`).
 * Opening and going back only read the conversation; a submit declared as a durable turn runs the
 * machine, and its answer is stored with the turn: a request equal to the token's latest submit is
 * WhatsApp retrying it, answered from the store. Nothing waits behind the conversation's queue: a
 * durable submit runs in its lane ahead of the queued inbounds (after the one turn running now),
 * and an invocation it enters stays with the lane's live actors.
 */
import { createHash } from 'node:crypto';
import { VersionConflictError } from '../errors.js';
import { errorInfo, type Logger } from '../log.js';
import { canonicalJson } from './fingerprint.js';
import type { CommitResult, ConversationKey, ConversationRecord, FlowSubmitRecord, HandoffChange, Store } from '../store/types.js';
import type { Bot } from './bot.js';
import type { RuntimeClock } from './clock.js';
import { DEFAULT_FLOW_BUDGET_MS, DEFAULT_FLOW_EXPIRED, flowScreensFor, isSubmit, type FlowAnswer, type FlowRequestInfo, type FlowScreens, type ScreenSubmit } from './flow-screens.js';
import { flowBody, flowRequestProblem, type FlowReply, type FlowRequest } from './flow-wire.js';
import type { ServedBots } from './served.js';
import { commit, flowTokenBot, hasChildren, isExpired, openActor, throwIfFailed, type LiveConversation, type TurnDeps } from './turn.js';

export type { FlowReply, FlowRequest } from './flow-wire.js';

/** What the exchange needs from the runtime. */
export interface FlowExchangeDeps {
  readonly store: Store;
  readonly bots: ServedBots;
  readonly turn: TurnDeps;
  readonly clock: RuntimeClock;
  readonly logger: Logger;
  /** After a durable submit's commit: what a lane does after its own (a live actor kept for its invocation, `onTurn`, waking sends and timers). */
  readonly committed: (bot: Bot, key: ConversationKey, live: LiveConversation, result: CommitResult & { handoff?: HandoffChange | undefined; firstTimerAt?: number | undefined }) => void;
  /** Runs a durable submit in the conversation's lane, ahead of its queue; undefined when another process holds the lane. */
  readonly exclusive: <T>(key: ConversationKey, fn: () => Promise<T>) => Promise<{ readonly value: T } | undefined>;
  /** The budget of a declaration that sets none (ms). */
  readonly budgetMs?: number | undefined;
}

const MAX_CONFLICT_RETRIES = 5;

/** The conversation and declaration a request is answered from. */
interface Target {
  readonly conv: ConversationRecord;
  readonly bot: Bot;
  readonly screens: FlowScreens;
  readonly info: FlowRequestInfo;
}

/** What the user sees when a durable submit cannot run now. */
const BUSY = 'We are still working on your last request. Please try again in a moment.';
const WITH_AGENT = 'A person is looking after your conversation now; they will help you from here.';

/** Answers the decrypted requests of live flows. */
export class FlowExchange {
  constructor(private readonly d: FlowExchangeDeps) {}

  /** Answers one decrypted request (never throws for a bot's failure: that is an error screen). */
  async handle(req: FlowRequest): Promise<FlowReply> {
    const started = performance.now();
    const problem = flowRequestProblem(req);
    if (problem !== undefined) return { status: 400, outcome: 'bad_request', body: { error: problem } };
    if (req.action === 'ping') return { status: 200, outcome: 'ok', body: { data: { status: 'active' } } };
    if (req.data !== undefined && 'error' in req.data) return this.acknowledge(req);
    const token = req.flow_token!;
    // A retry of the token's latest submit gets its stored answer, whatever happened since (its own turn may have sent the next flow).
    const requestKey = req.action === 'data_exchange' ? submitKey(token, req.screen!, req.data ?? {}) : undefined;
    const latest = requestKey === undefined ? undefined : await this.d.store.latestFlowSubmit(token);
    if (latest && latest.requestKey === requestKey) return replayed(latest);
    const conv = await this.d.store.conversationByFlowToken(token);
    const bot = conv && this.d.bots.choose(conv.botId, conv.botVersion, (conv.snapshot as { value?: unknown } | null)?.value)?.bot;
    if (!conv || !bot) {
      // An older flow's token (the conversation sent a newer one since) names its bot: its text, then.
      const named = flowTokenBot(token);
      const owner = named && this.d.bots.newest(named.id);
      return expired(owner && expiredText(owner, undefined), conv ? 'its bot is not served' : 'not a current flow token');
    }
    const target = this.target(conv, bot, req);
    if ('why' in target) return expired(expiredText(bot, undefined), target.why);
    return this.answerWithin(target, req, started, requestKey === undefined ? undefined : { requestKey, latest });
  }

  /** An error notification WhatsApp sends about a screen: logged by its code, acknowledged. */
  private acknowledge(req: FlowRequest): FlowReply {
    const code = String(req.data!['error']);
    this.d.logger.warn({ action: req.action, screen: req.screen, error: /^[A-Za-z0-9_.-]{1,64}$/.test(code) ? code : '(not a code)' }, 'WhatsApp reported an error in a live flow');
    return { status: 200, outcome: 'ok', action: 'error', body: { data: { acknowledged: true } } };
  }

  /** The conversation and declaration, or why the token is no longer valid. */
  private target(conv: ConversationRecord, bot: Bot, req: FlowRequest): Target | { why: string } {
    if (conv.status !== 'active') return { why: `conversation ${conv.status}` };
    if (isExpired(bot, conv, this.d.clock.now())) return { why: 'conversation idle past its expiry' };
    if (conv.flowToken !== req.flow_token) return { why: 'not the conversation’s current flow' };
    const sentBy = flowTokenBot(conv.flowToken);
    if (conv.botVersion !== bot.version || (sentBy !== undefined && sentBy.version !== conv.botVersion)) return { why: 'the bot’s version changed since the flow was sent' };
    const found = flowScreensFor(bot.options.flows as Readonly<Record<string, FlowScreens>> | undefined, conv.state);
    if (!found) return { why: `state "${conv.state ?? ''}" answers no flow` };
    const context = (conv.snapshot as { context?: unknown } | null)?.context;
    const info: FlowRequestInfo = { context, state: conv.state ?? '', botId: conv.botId, user: conv.user, screen: req.screen, data: req.data ?? {}, token: req.flow_token!, now: this.d.clock.now() };
    return { conv, bot, screens: found.screens, info };
  }

  /** Runs the answer under the budget, counted from the request's arrival: past it, or failing, the user sees an error on the screen. */
  private async answerWithin(t: Target, req: FlowRequest, started: number, submit: SubmitKeys | undefined): Promise<FlowReply> {
    const budget = (t.screens.budgetMs ?? this.d.budgetMs ?? DEFAULT_FLOW_BUDGET_MS) - (performance.now() - started);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), Math.max(0, budget));
    });
    const work = this.answer(t, req, submit).catch((err: unknown) => ({ failed: err }));
    try {
      const r = await Promise.race([work, late]);
      if (r === 'late') {
        this.d.logger.warn({ bot: t.bot.id, state: t.info.state, action: req.action, screen: req.screen }, 'a Flow answer took longer than its budget; the user sees an error on the screen');
        // A durable submit still commits (and its retry answers what it stored).
        void work.then((late) => 'failed' in late && this.logFailure(t, req, late.failed));
        return this.errorReply(t, req, 'This is taking longer than it should. Please try again.');
      }
      if (!('failed' in r)) return r;
      this.logFailure(t, req, r.failed);
      if (r.failed instanceof FlowRefused) return r.failed.gone ? expired(expiredText(t.bot, t.screens), r.failed.message) : this.errorReply(t, req, r.failed.message);
      return this.errorReply(t, req, 'Something went wrong on our side. Please try again.');
    } finally {
      clearTimeout(timer);
    }
  }

  private logFailure(t: Target, req: FlowRequest, err: unknown): void {
    const at = { bot: t.bot.id, state: t.info.state, action: req.action, screen: req.screen };
    if (err instanceof FlowRefused) this.d.logger.info({ ...at, why: err.why }, 'a Flow submit was not run');
    else this.d.logger.error({ err: errorInfo(err), ...at }, 'a Flow answer failed; the user sees an error on the screen');
  }

  /** An error shown on the screen the request came from (INIT: the declared first screen, else a 500). */
  private errorReply(t: Target, req: FlowRequest, message: string): FlowReply {
    const screen = req.screen ?? t.screens.firstScreen;
    if (screen === undefined) return { status: 500, outcome: 'unavailable', body: { error: message } };
    return { status: 200, outcome: 'screen_error', body: { screen, data: { error_message: message } } };
  }

  private async answer(t: Target, req: FlowRequest, submit: SubmitKeys | undefined): Promise<FlowReply> {
    if (req.action === 'INIT') return this.reply(t, req, await t.screens.open(t.info));
    if (req.action === 'BACK') return this.reply(t, req, t.screens.back ? await t.screens.back(t.info) : { kind: 'screen', screen: req.screen!, data: {} });
    const handler = Object.hasOwn(t.screens.screens, req.screen!) ? t.screens.screens[req.screen!] : undefined;
    if (handler === undefined) {
      this.d.logger.error({ bot: t.bot.id, state: t.info.state, screen: req.screen }, 'a live flow submitted a screen its state declares no answer for');
      return this.errorReply(t, req, 'This step is not available right now. Please try again later.');
    }
    if (!isSubmit(handler)) return this.reply(t, req, await handler(t.info));
    return this.submit(t, req, handler, submit!);
  }

  /** The wire body of an answer, checked. */
  private reply(t: Target, req: FlowRequest, answer: FlowAnswer): FlowReply & { status: 200 } {
    const body = flowBody(answer, req, t.info.token, `bot "${t.bot.id}", state "${t.info.state}"`);
    return { status: 200, outcome: answer.kind === 'error' ? 'screen_error' : 'ok', body };
  }

  /**
   * A submit that runs the machine, in the conversation's lane ahead of its queue (after the turn
   * running now, before the next inbound; refused while another process holds the lane): its event,
   * then the answer from the new context, committed together with the submit's row, and an
   * invocation it enters handed to the lane. Its unique key chains the request to the token's
   * latest submit when it arrived, so a copy of one retry that ran meanwhile is found and replayed.
   */
  private async submit(first: Target, req: FlowRequest, handler: ScreenSubmit, keys: SubmitKeys): Promise<FlowReply> {
    const dedupeKey = chainKey(keys.requestKey, keys.latest);
    const ran = await this.d.exclusive({ botId: first.conv.botId, user: first.conv.user }, async () => {
      const copy = await this.d.store.flowSubmit(dedupeKey);
      if (copy) return replayed(copy);
      return this.runSubmit(await this.current(first, req), req, handler, keys.requestKey, dedupeKey);
    });
    if (!ran) throw new FlowRefused(BUSY, 'another process holds the conversation');
    return ran.value;
  }

  /** The submit's turn; a commit that lost to another writer runs again on what that writer left (the event's actions and `answer` with it: they must only compute). */
  private async runSubmit(first: Target, req: FlowRequest, handler: ScreenSubmit, requestKey: string, dedupeKey: string): Promise<FlowReply> {
    let t = first;
    for (let attempt = 0; ; attempt++) {
      await this.refuseIfHeld(t);
      const key = { botId: t.conv.botId, user: t.conv.user };
      const opened = await openActor(this.d.turn, t.bot, key, t.conv);
      if (!opened.live || opened.fresh) {
        opened.live?.handle.stop();
        throw new FlowRefused('the conversation cannot be opened on this bot version', 'incompatible snapshot', true);
      }
      const { live } = opened;
      let adopted = false;
      try {
        const event = handler.event(t.info);
        if (!live.handle.offer(event))
          this.d.logger.warn({ bot: t.bot.id, state: t.info.state, screen: req.screen, event: event.type }, 'the machine does not handle the event of a Flow submit in this state; nothing changed');
        throwIfFailed(t.bot, live.handle);
        const after: FlowRequestInfo = { ...t.info, context: live.handle.snapshot.context, state: live.handle.state };
        const answer = await handler.answer(after);
        const reply = this.reply({ ...t, info: after }, req, answer);
        const flowSubmit = { dedupeKey, requestKey, flowToken: t.info.token, screen: req.screen!, answer: reply.body, completes: answer.kind === 'complete' };
        const result = await commit(this.d.turn, { key, bot: t.bot, conv: t.conv, live, userActivity: true, flowSubmit });
        adopted = true;
        this.d.committed(t.bot, key, live, result);
        return reply;
      } catch (err) {
        if (!(err instanceof VersionConflictError) || attempt >= MAX_CONFLICT_RETRIES) throw err;
        // Another writer was first: a copy of this submit in another process, or other work of the conversation.
        const copy = await this.d.store.flowSubmit(dedupeKey);
        if (copy) return replayed(copy);
        t = await this.current(t, req);
      } finally {
        if (!adopted) live.handle.stop();
      }
    }
  }

  /** The conversation and declaration as they are now (the lane's work may have moved them); a 427 when the form is no longer current. */
  private async current(t: Target, req: FlowRequest): Promise<Target> {
    const conv = await this.d.store.conversationByFlowToken(t.info.token);
    const now = conv && this.target(conv, t.bot, req);
    if (!now || 'why' in now) throw new FlowRefused('the form is no longer current', now && 'why' in now ? now.why : 'unknown token', true);
    return now;
  }

  /** A durable submit waits while an invocation runs (its result commits later, against the version it started from) and while a person holds the conversation. */
  private async refuseIfHeld(t: Target): Promise<void> {
    if (hasChildren(t.conv.snapshot)) throw new FlowRefused(BUSY, 'an invocation is running');
    if (await this.d.store.openHandoff(t.conv.id)) throw new FlowRefused(WITH_AGENT, 'a person holds the conversation');
  }
}

/** A request's key and the token's latest submit when it arrived. */
interface SubmitKeys {
  readonly requestKey: string;
  readonly latest: FlowSubmitRecord | undefined;
}

/** A durable submit that is not run: the user sees `message` (on the screen, or as a 427 when `gone`). */
class FlowRefused extends Error {
  constructor(
    message: string,
    readonly why: string,
    readonly gone = false,
  ) {
    super(message);
  }
}

function replayed(s: FlowSubmitRecord): FlowReply {
  return { status: 200, outcome: 'replayed', body: s.answer as Record<string, unknown> };
}

/** A request's key: its token, screen and data (key order aside), hashed. */
export function submitKey(token: string, screen: string, data: Readonly<Record<string, unknown>>): string {
  return createHash('sha256')
    .update(canonicalJson([token, screen, data]))
    .digest('base64url');
}

/** The submit's unique key: the request chained to the token's latest submit, so only copies of one retry collide. */
function chainKey(requestKey: string, latest: FlowSubmitRecord | undefined): string {
  return createHash('sha256')
    .update(`${latest?.dedupeKey ?? ''}\n${requestKey}`)
    .digest('base64url');
}

/** The text a 427 shows: the declaration's, else the first one the bot declares, else the default. */
function expiredText(bot: Bot, screens: FlowScreens | undefined): string {
  if (screens?.expired) return screens.expired;
  const all = Object.values((bot.options.flows ?? {}) as Readonly<Record<string, FlowScreens>>);
  return all.find((f) => f.expired)?.expired ?? DEFAULT_FLOW_EXPIRED;
}

function expired(text: string | undefined, why: string): FlowReply {
  return { status: 427, outcome: 'expired', why, body: { error_msg: text ?? DEFAULT_FLOW_EXPIRED } };
}
