/**
 * A live flow (`flow_action: "data_exchange"`) in a test: the screens a user walks, each request
 * shaped as WhatsApp sends it to the Flow endpoint (decrypted) and answered by the runtime's
 * `flows.handle()`, the same code the endpoint runs. After a completing answer the `nfm_reply`
 * WhatsApp sends next is delivered once, as the webhook would.
 */
import type { FlowReply, FlowRequest } from '../conversation/flow-wire.js';
import { FLOW_DATA_API_VERSION } from '../testing/flow-client.js';
import { ExpectationError } from './harness-expect.js';

/** What a {@link TestFlow} needs from its conversation. */
export interface FlowHost {
  /**
   * Answers one request through the runtime, waits until what it committed is sent, and moves
   * `latest` on; when `completion` finds the answer completed the flow, delivers the `nfm_reply`
   * with that data (`latest` then holds what the submit and the reply said).
   */
  exchange(req: FlowRequest, label: string, completion?: (reply: FlowReply) => Record<string, unknown> | undefined): Promise<FlowReply>;
}

/** Options of {@link TestFlow.submit}. */
export interface TestFlowSubmitOptions {
  /** The screen that submits (default: the screen shown). */
  readonly screen?: string | undefined;
}

/**
 * One live flow a bot sent, walked screen by screen (`TestConversation.openFlow()` opens it). Each
 * action answers as the endpoint would answer WhatsApp and updates what the user sees: `screen` and
 * `data`, `errorMessage` on an error, `completed` and `params` once the flow closed, `expired` when
 * the token is no longer valid (427).
 *
 * @example
 * await conv.tap('Other times');
 * const f = await conv.openFlow();        // INIT
 * expect(f.screen).toBe('DAYS');
 * await f.submit({ day: 'mon' });         // data_exchange on DAYS
 * await f.submit({ day: 'mon', slot: '0900' });
 * await f.submit({ day: 'mon', slot: '0900' }); // CONFIRM: a durable turn that completes the flow
 * expect(f.completed).toBe(true);
 * conv.expectText(/Booked/);              // said once, the nfm_reply that followed ran nothing more
 */
export class TestFlow {
  #screen: string | undefined;
  #data: Readonly<Record<string, unknown>> = {};
  #error: string | undefined;
  #params: Readonly<Record<string, unknown>> | undefined;
  #expired: string | undefined;
  #reply: FlowReply | undefined;
  #last: FlowRequest | undefined;
  #delivered = false;
  /** The screens shown before the current one, for `back()`. */
  readonly #trail: string[] = [];

  /** @internal Made by `TestConversation.openFlow()`. */
  constructor(
    private readonly host: FlowHost,
    /** The flow token WhatsApp sends with every request of this flow. */
    readonly token: string,
    /** The flow's id (`flow_id` of the message). */
    readonly flowId: string,
  ) {}

  /** The screen shown: the last one answered (`SUCCESS` once the flow completed); undefined before it opened. */
  get screen(): string | undefined {
    return this.#screen;
  }

  /** The shown screen's data (without `error_message`). */
  get data(): Readonly<Record<string, unknown>> {
    return this.#data;
  }

  /** The message shown on the screen (`data.error_message` of the last answer), if any. */
  get errorMessage(): string | undefined {
    return this.#error;
  }

  /** True once an answer closed the flow (`SUCCESS`). */
  get completed(): boolean {
    return this.#params !== undefined;
  }

  /** The completion's params (`extension_message_response.params`, the flow token included), once completed. */
  get params(): Readonly<Record<string, unknown>> | undefined {
    return this.#params;
  }

  /** The text WhatsApp shows when the last answer was 427 (the token is no longer valid), else undefined. */
  get expired(): string | undefined {
    return this.#expired;
  }

  /** The last answer, as the endpoint gave it (status, outcome, body). */
  get reply(): FlowReply | undefined {
    return this.#reply;
  }

  /** Opens the flow (`INIT`), as WhatsApp does when the user taps the button. */
  open(): Promise<FlowReply> {
    return this.request({ version: FLOW_DATA_API_VERSION, action: 'INIT', flow_token: this.token }, 'open the flow');
  }

  /** Submits the shown screen (or `options.screen`) with `data` (`data_exchange`). */
  async submit(data: Readonly<Record<string, unknown>>, options: TestFlowSubmitOptions = {}): Promise<FlowReply> {
    if (this.completed) throw new ExpectationError(`Cannot submit flow ${this.flowId}: it completed already (replay() sends its last request again)`);
    const screen = options.screen ?? this.#screen;
    if (screen === undefined)
      throw new ExpectationError(`Cannot submit flow ${this.flowId}: no screen is shown (${this.#expired === undefined ? 'it did not open' : `it expired: ${this.#expired}`}); pass { screen }`);
    return this.request({ version: FLOW_DATA_API_VERSION, action: 'data_exchange', screen, data: { ...data }, flow_token: this.token }, `submit screen ${screen} of the flow`);
  }

  /**
   * Goes back to the previous screen (`BACK` names that screen, as WhatsApp does for a screen with
   * `refresh_on_back`). Throws when no screen came before.
   */
  async back(): Promise<FlowReply> {
    if (this.completed) throw new ExpectationError(`Cannot go back in flow ${this.flowId}: it completed already`);
    const previous = this.#trail.at(-1);
    if (previous === undefined) throw new ExpectationError(`Cannot go back in flow ${this.flowId}: no screen came before ${this.#screen ?? '(none)'}`);
    return this.request({ version: FLOW_DATA_API_VERSION, action: 'BACK', screen: previous, flow_token: this.token }, `go back to screen ${previous} of the flow`, previous);
  }

  /** Sends the last request again, exactly, as WhatsApp retries one whose answer it did not get. */
  async replay(): Promise<FlowReply> {
    const last = this.#last;
    if (last === undefined) throw new ExpectationError(`Nothing to replay: flow ${this.flowId} has sent no request yet`);
    return this.request(last, `replay ${last.action}${last.screen === undefined ? '' : ` on ${last.screen}`}`, last.action === 'BACK' ? last.screen : undefined);
  }

  /** Throws unless the flow shows `screen` (and, when given, data with these values). */
  expectScreen(screen: string, data?: Readonly<Record<string, unknown>>): this {
    const shown =
      this.#expired !== undefined ? `it expired (427: ${this.#expired})` : `it shows ${this.#screen ?? 'nothing'}${this.#error === undefined ? '' : ` with the error ${JSON.stringify(this.#error)}`}`;
    if (this.#screen !== screen || this.#expired !== undefined) throw new ExpectationError(`Expected flow ${this.flowId} to show screen ${screen}, but ${shown}`);
    for (const [k, v] of Object.entries(data ?? {})) {
      if (JSON.stringify(this.#data[k]) !== JSON.stringify(v)) throw new ExpectationError(`Expected screen ${screen}'s ${k} to be ${JSON.stringify(v)}, but it is ${JSON.stringify(this.#data[k])}`);
    }
    return this;
  }

  private async request(req: FlowRequest, label: string, backTo?: string): Promise<FlowReply> {
    this.#last = req;
    const reply = await this.host.exchange(req, label, (r) => this.completion(r));
    this.apply(req, reply, backTo);
    return reply;
  }

  /** The `nfm_reply`'s data when `reply` is the first completion this flow saw. */
  private completion(reply: FlowReply): Record<string, unknown> | undefined {
    const params = completionParams(reply);
    if (params === undefined || this.#delivered) return undefined;
    this.#delivered = true;
    const { flow_token: _token, ...data } = params;
    return data;
  }

  /** What the user sees after `reply`. */
  private apply(req: FlowRequest, reply: FlowReply, backTo: string | undefined): void {
    this.#reply = reply;
    if (reply.status === 427) {
      this.#expired = reply.body.error_msg;
      return;
    }
    if (reply.status !== 200) throw new ExpectationError(`The Flow endpoint answered ${reply.status} to ${req.action}${req.screen === undefined ? '' : ` on ${req.screen}`}: ${reply.body.error}`);
    this.#expired = undefined;
    const params = completionParams(reply);
    if (params !== undefined) {
      this.#params = params;
      this.#screen = 'SUCCESS';
      this.#data = {};
      this.#error = undefined;
      return;
    }
    const screen = String(reply.body['screen']);
    const { error_message: error, ...data } = (reply.body['data'] ?? {}) as Record<string, unknown>;
    this.#error = typeof error === 'string' ? error : undefined;
    // An error keeps the screen's data (the answer adds to it); another screen replaces it.
    this.#data = error !== undefined && screen === this.#screen ? { ...this.#data, ...data } : data;
    this.move(screen, backTo);
  }

  /** Keeps the trail of screens: forward pushes the one left, back pops to the one returned to. */
  private move(screen: string, backTo: string | undefined): void {
    if (backTo !== undefined) {
      const at = this.#trail.lastIndexOf(backTo);
      if (at >= 0) this.#trail.length = at;
    } else if (this.#screen !== undefined && this.#screen !== screen) {
      this.#trail.push(this.#screen);
    }
    this.#screen = screen;
  }
}

/** The params of a completing answer (`SUCCESS`), or undefined. */
export function completionParams(reply: FlowReply): Readonly<Record<string, unknown>> | undefined {
  if (reply.status !== 200 || reply.body['screen'] !== 'SUCCESS') return undefined;
  const data = reply.body['data'] as { extension_message_response?: { params?: Record<string, unknown> } } | undefined;
  return data?.extension_message_response?.params ?? {};
}
