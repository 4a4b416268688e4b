/**
 * The web simulator's live flows: the page's phone opens a data-exchange flow and the server side
 * plays WhatsApp against the server's own Flow endpoint over loopback (`FlowClient`: encrypted with
 * the endpoint's public key, signed with the app secret when one is set), one {@link LiveFlow} per
 * flow token the page opened. After `SUCCESS` it sends the `nfm_reply` to the webhook, as WhatsApp
 * does, through the sandbox's deliverer.
 */
import { z } from 'zod';
import { FlowInputError, LiveFlow, type FlowEndpointAccess, type FlowStep } from '../chat-flow.js';
import type { BotInfo } from './bots.js';
import type { Sent, UserSender } from './send.js';

const user = z.string().regex(/^[0-9]{6,20}$/, 'must be 6 to 20 digits (country code and number, no "+")');
const key = { bot: z.string().min(1), user, token: z.string().min(1).max(512) };
/** The provider id of the flow message (WhatsApp's `context.id` of the `nfm_reply`). */
const context = z.string().min(1).max(512).optional();

/** `POST /simulator/api/flow/open`: the user taps a live flow's button (INIT). */
export const LiveOpenInput = z.strictObject({ ...key, flowId: z.string().min(1).max(200), context });
/** `POST /simulator/api/flow/submit`: the user submits the screen (`values`: field name → value, a choice's id for a select). */
export const LiveSubmitInput = z.strictObject({ ...key, values: z.record(z.string().min(1).max(200), z.unknown()) });
/** `POST /simulator/api/flow/back`: the back arrow. */
export const LiveBackInput = z.strictObject(key);

/** What the API answers: where the flow is, and the `nfm_reply`'s delivery once it completed. */
export interface LiveAnswer {
  readonly step: FlowStep;
  readonly delivered?: Sent | undefined;
}

/** The user's input does not fit the screen (400), or no flow with that token is open (404). */
export class LiveFlowRefusal extends Error {
  constructor(
    readonly status: 400 | 404 | 503,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

interface Open {
  readonly bot: string;
  readonly user: string;
  readonly flow: LiveFlow;
  readonly context: string | undefined;
}

/** How many flows stay open at once (the oldest is forgotten first). */
const MAX_OPEN = 200;

/** The flows the pages have opened, by token. */
export class LiveFlows {
  readonly #open = new Map<string, Open>();

  /** `access`: how to reach the Flow endpoint; undefined when the server has none for the simulator. */
  constructor(
    private readonly access: (() => FlowEndpointAccess) | undefined,
    private readonly sender: UserSender,
  ) {}

  /** Opens (or opens again) the flow of a token. */
  async open(bot: BotInfo, i: z.infer<typeof LiveOpenInput>): Promise<LiveAnswer> {
    if (this.access === undefined)
      throw new LiveFlowRefusal(503, 'no_flow_endpoint', 'this server has no Flow endpoint key the simulator can use (set COLLOQUY_FLOW_PRIVATE_KEY, or run with the sandbox)');
    const flow = new LiveFlow(this.access(), i.token, bot.flowForms[i.flowId]);
    this.#open.delete(i.token);
    this.#open.set(i.token, { bot: bot.id, user: i.user, flow, context: i.context });
    while (this.#open.size > MAX_OPEN) this.#open.delete(this.#open.keys().next().value!);
    return this.settle(bot, i.token, await flow.open());
  }

  /** Submits the screen the flow is on. */
  async submit(bot: BotInfo, i: z.infer<typeof LiveSubmitInput>): Promise<LiveAnswer> {
    const o = this.opened(bot, i);
    try {
      return await this.settle(bot, i.token, await o.flow.submit(i.values));
    } catch (err) {
      if (err instanceof FlowInputError) throw new LiveFlowRefusal(400, 'bad_input', err.message);
      throw err;
    }
  }

  /** Back to the previous screen (the same one when there is none). */
  back(bot: BotInfo, i: z.infer<typeof LiveBackInput>): LiveAnswer {
    const o = this.opened(bot, i);
    const step = o.flow.back() ?? o.flow.step;
    if (step === undefined) throw new LiveFlowRefusal(404, 'flow_not_open', 'this flow has not opened');
    return { step };
  }

  private opened(bot: BotInfo, i: { user: string; token: string }): Open {
    const o = this.#open.get(i.token);
    if (o === undefined || o.bot !== bot.id || o.user !== i.user) throw new LiveFlowRefusal(404, 'flow_not_open', 'no flow with this token is open on this phone: open it first');
    return o;
  }

  /** A closed flow is forgotten; a completed one's answer goes to the webhook. */
  private async settle(bot: BotInfo, token: string, step: FlowStep): Promise<LiveAnswer> {
    if (step.kind === 'screen' || step.kind === 'failed') return { step };
    const o = this.#open.get(token);
    this.#open.delete(token);
    if (step.kind === 'closed' || o === undefined) return { step };
    const delivered = await this.sender.flow(bot, { bot: bot.id, user: o.user, token, data: { ...step.params }, ...(o.context !== undefined && { context: o.context }) });
    return { step, delivered };
  }
}
