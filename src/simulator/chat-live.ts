/**
 * The terminal chat's live flows: `/open` opens the latest data-exchange flow the bot sent through
 * the chat's Flow endpoint (started on first use), lines typed meanwhile answer its screens,
 * `/back` and `/close` move around it, and once it completes the phone's `nfm_reply` goes to the
 * bot as WhatsApp sends it, with the flow's token and the completion's params.
 */
import type { SentFlow } from './harness-sent.js';
import type { TestConversation } from './harness.js';
import { startChatFlowEndpoint, type ChatFlowEndpoint } from './chat-endpoint.js';
import { ChatForm } from './chat-form.js';
import type { FlowStep } from './chat-flow.js';

/** What the chat's live flows need from the session. */
export interface ChatLiveDeps {
  /** The session's current conversation (a `/restart` changes it). */
  readonly conv: () => TestConversation;
  readonly out: (text: string) => void;
  /** Runs a user's action on the conversation and prints what the bot answered. */
  readonly andPrint: (action: Promise<void>) => Promise<void>;
}

/** The open form and the endpoint behind it. */
export class ChatLiveFlows {
  #form: ChatForm | undefined;
  #endpoint: Promise<ChatFlowEndpoint> | undefined;

  constructor(private readonly d: ChatLiveDeps) {}

  /** Whether a form is open (lines typed answer it). */
  get open(): boolean {
    return this.#form !== undefined;
  }

  /** `/open`: opens the latest live flow the bot sent (INIT through the endpoint). */
  async openLatest(): Promise<void> {
    const conv = this.d.conv();
    const sent = [...conv.sent].reverse().find((s): s is SentFlow => s.kind === 'flow' && s.channel !== 'sms');
    if (sent === undefined) throw new Error('no form to open: the bot has sent no flow message');
    const p = sent.flow.action.parameters;
    if (p.flow_action !== 'data_exchange') throw new Error(`the last form is not a live one (flow_action "${p.flow_action}"): answer it with /flow {"field": "value"}`);
    this.#endpoint ??= startChatFlowEndpoint(() => this.d.conv().runtime.flows);
    const { access } = await this.#endpoint;
    const { form, step } = await ChatForm.open(access, p.flow_token, conv.bot.options.flowForms?.[p.flow_id], this.d.out);
    this.#form = form;
    await this.after(step, p.flow_token);
  }

  /** A line typed while the form is open. */
  async line(text: string): Promise<void> {
    const form = this.#form!;
    const step = await form.answer(text);
    if (step) await this.after(step, form.token);
  }

  /** `/back`: the previous screen. */
  back(): void {
    if (!this.#form) throw new Error('no form is open (/open opens the last one)');
    if (!this.#form.back()) this.d.out('(this is the first screen: /close closes the form)\n');
  }

  /** `/close`: closes the form without an answer, as the phone's ✕ does (it can be opened again). */
  close(): void {
    if (!this.#form) throw new Error('no form is open');
    this.#form = undefined;
    this.d.out('(form closed without sending: /open opens it again)\n');
  }

  /** Forgets the form (a new conversation). */
  forget(): void {
    this.#form = undefined;
  }

  /** Stops the endpoint. */
  async dispose(): Promise<void> {
    this.#form = undefined;
    const endpoint = await this.#endpoint?.catch(() => undefined);
    await endpoint?.close();
  }

  private async after(step: FlowStep, token: string): Promise<void> {
    if (step.kind === 'screen' || step.kind === 'failed') return;
    this.#form = undefined;
    // WhatsApp sends the completed flow's answer to the webhook: the token and the params.
    if (step.kind === 'complete') await this.d.andPrint(this.d.conv().send({ type: 'flow', token, data: { ...step.params } }));
  }
}
