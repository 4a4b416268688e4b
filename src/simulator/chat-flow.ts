/**
 * The phone's side of a live WhatsApp Flow (`flow_action: "data_exchange"`), for the terminal chat
 * and the web simulator: it plays WhatsApp against the real Flow endpoint over loopback
 * (`FlowClient`: encrypted with the endpoint's public key, signed with the app secret), opens the
 * flow (INIT), shows each screen it is answered with, submits a screen with the screen data's plain
 * values plus what the user filled in, goes back locally as WhatsApp does, and reports the
 * completion (`SUCCESS`) whose params the phone then sends as the `nfm_reply`.
 */
import type { FlowField, FlowForm } from '../conversation/bot.js';
import { FlowClient } from '../testing/flow-client.js';

/** Where the Flow endpoint is and how to reach it. */
export interface FlowEndpointAccess {
  /** `POST /flows` of the running server (on 127.0.0.1). */
  readonly url: string;
  /** The endpoint's public key (PEM). */
  readonly publicKey: string;
  /** The app secret requests are signed with, when the endpoint checks signatures. */
  readonly appSecret?: string | undefined;
}

/** One choice of a screen's dropdown. */
export interface FlowChoice {
  readonly id: string;
  readonly title: string;
}

/** A field as the screen shows it, its choices resolved from the screen's data. */
export interface ScreenField {
  readonly name: string;
  readonly label: string;
  readonly type: NonNullable<FlowField['type']>;
  readonly required: boolean;
  /** A `select`'s choices: `optionsFrom`'s list in the screen's data, else the field's `options`. */
  readonly choices?: readonly FlowChoice[] | undefined;
}

/** A screen the endpoint answered, as the phone shows it. */
export interface FlowScreenView {
  readonly kind: 'screen';
  readonly screen: string;
  /** The screen's title in the bot's `flowForms`, else its name. */
  readonly title: string;
  /** The screen data's plain values (text, numbers, yes/no), shown as text and sent back with the submit. */
  readonly values: readonly { readonly name: string; readonly text: string }[];
  readonly fields: readonly ScreenField[];
  /** Whether the bot's `flowForms` declares this screen (else the user types the answers as JSON). */
  readonly declared: boolean;
  /** `data.error_message` of the answer, shown on the screen. */
  readonly error?: string | undefined;
  /** Whether there is a screen to go back to. */
  readonly canGoBack: boolean;
}

/** Where a flow is after a request. */
export type FlowStep =
  | FlowScreenView
  /** `SUCCESS`: the flow closed; `params` (without the token) go back in the `nfm_reply`. */
  | { readonly kind: 'complete'; readonly params: Readonly<Record<string, unknown>> }
  /** 427: the token is no longer valid; the phone shows `message` and disables the button. */
  | { readonly kind: 'closed'; readonly message: string }
  /** Any other answer: the endpoint's status and what it said. */
  | { readonly kind: 'failed'; readonly status: number; readonly message: string };

/** A value the user gave that the screen does not take; nothing was sent. */
export class FlowInputError extends Error {
  override name = 'FlowInputError';
}

interface Shown {
  readonly screen: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly error?: string | undefined;
}

/** One opened live flow on a simulated phone. */
export class LiveFlow {
  readonly #client: FlowClient;
  readonly #stack: Shown[] = [];
  #ended: FlowStep | undefined;

  /**
   * @param token the flow message's `flow_token`
   * @param form the bot's `flowForms[flow_id]`, which says how each screen shows
   */
  constructor(
    access: FlowEndpointAccess,
    readonly token: string,
    private readonly form: FlowForm | undefined,
  ) {
    this.#client = new FlowClient({ url: access.url, publicKey: access.publicKey, ...(access.appSecret !== undefined && { appSecret: access.appSecret }) });
  }

  /** Where the flow is now (undefined before it opened). */
  get step(): FlowStep | undefined {
    return this.#ended ?? (this.#stack.length > 0 ? this.view(this.#stack.at(-1)!) : undefined);
  }

  /** Opens the flow: INIT. */
  async open(): Promise<FlowStep> {
    this.#stack.length = 0;
    this.#ended = undefined;
    return this.answered(await this.#client.init(this.token), undefined);
  }

  /**
   * Submits the current screen (`data_exchange`) with its data's plain values and `input` (field
   * name → value; a `select`'s value is a choice's id). Throws {@link FlowInputError}, sending
   * nothing, when a required field is missing or a choice is not offered.
   */
  async submit(input: Readonly<Record<string, unknown>>): Promise<FlowStep> {
    const top = this.#stack.at(-1);
    if (top === undefined || this.#ended) throw new FlowInputError(this.#ended ? 'this flow is closed' : 'the flow is not open yet');
    const view = this.view(top);
    const data = { ...Object.fromEntries(view.values.map((v) => [v.name, top.data[v.name]])), ...checked(view, input) };
    return this.answered(await this.#client.submit(this.token, top.screen, data), top);
  }

  /** Goes back to the previous screen as it was (WhatsApp's back arrow); undefined on the first. */
  back(): FlowScreenView | undefined {
    if (this.#ended || this.#stack.length < 2) return undefined;
    this.#stack.pop();
    const prev = this.#stack.pop()!;
    this.#stack.push({ screen: prev.screen, data: prev.data });
    return this.view(this.#stack.at(-1)!);
  }

  private answered(res: { status: number; body: unknown }, from: Shown | undefined): FlowStep {
    const body = (typeof res.body === 'object' && res.body !== null ? res.body : {}) as Record<string, unknown>;
    if (res.status === 427) return (this.#ended = { kind: 'closed', message: String(body['error_msg'] ?? 'This form is no longer available.') });
    const screen = body['screen'];
    const data = (typeof body['data'] === 'object' && body['data'] !== null ? body['data'] : {}) as Record<string, unknown>;
    if (res.status !== 200 || typeof screen !== 'string') {
      const why = typeof body['error'] === 'string' ? body['error'] : typeof body['error_msg'] === 'string' ? body['error_msg'] : 'no screen in the answer';
      return { kind: 'failed', status: res.status, message: `the Flow endpoint answered ${res.status}: ${why}` };
    }
    if (screen === 'SUCCESS') {
      const { flow_token: _token, ...params } = ((data['extension_message_response'] as { params?: Record<string, unknown> } | undefined)?.params ?? {}) as Record<string, unknown>;
      return (this.#ended = { kind: 'complete', params });
    }
    const { error_message: error, ...rest } = data;
    const message = typeof error === 'string' ? error : undefined;
    // An error on the same screen keeps what the screen showed, with any new data over it.
    if (message !== undefined && from !== undefined && from.screen === screen) this.#stack[this.#stack.length - 1] = { screen, data: { ...from.data, ...rest }, error: message };
    else this.#stack.push({ screen, data: rest, ...(message !== undefined && { error: message }) });
    return this.view(this.#stack.at(-1)!);
  }

  private view(s: Shown): FlowScreenView {
    const declared = this.form?.screens?.[s.screen];
    const fields = (declared?.fields ?? []).map((f) => fieldOf(f, s.data));
    const values = Object.entries(s.data)
      .filter(([name, v]) => isPlain(v) && !fields.some((f) => f.name === name))
      .map(([name, v]) => ({ name, text: String(v) }));
    return {
      kind: 'screen',
      screen: s.screen,
      title: declared?.title ?? s.screen,
      values,
      fields,
      declared: declared !== undefined,
      ...(s.error !== undefined && { error: s.error }),
      canGoBack: this.#stack.length > 1,
    };
  }
}

function isPlain(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function fieldOf(f: FlowField, data: Readonly<Record<string, unknown>>): ScreenField {
  const type = f.type ?? (f.optionsFrom !== undefined ? 'select' : 'text');
  const base = { name: f.name, label: f.label ?? f.name, type, required: f.required === true };
  if (f.optionsFrom !== undefined) return { ...base, choices: choicesIn(data[f.optionsFrom]) };
  if (f.options !== undefined) return { ...base, choices: f.options.map((o) => ({ id: o, title: o })) };
  return base;
}

/** A list of `{ id, title }` in a screen's data (anything else in it is left out). */
function choicesIn(v: unknown): FlowChoice[] {
  if (!Array.isArray(v)) return [];
  return v.filter((c): c is { id: unknown; title?: unknown } => typeof c === 'object' && c !== null && 'id' in c).map((c) => ({ id: String(c.id), title: String(c.title ?? c.id) }));
}

/** The user's values for a declared screen, checked (an undeclared screen's are sent as given). */
function checked(view: FlowScreenView, input: Readonly<Record<string, unknown>>): Record<string, unknown> {
  if (!view.declared) return { ...input };
  const out: Record<string, unknown> = {};
  for (const f of view.fields) {
    const v = input[f.name];
    if (v === undefined || v === '') {
      if (f.required) throw new FlowInputError(`${f.label} is required`);
      continue;
    }
    if (f.choices !== undefined && !f.choices.some((c) => c.id === String(v))) {
      throw new FlowInputError(`${f.label}: "${String(v)}" is not one of the choices (${f.choices.map((c) => c.id).join(', ') || 'none'})`);
    }
    out[f.name] = f.type === 'number' ? Number(v) : f.type === 'boolean' ? v === true || v === 'true' : v;
  }
  const unknown = Object.keys(input).filter((k) => !view.fields.some((f) => f.name === k));
  if (unknown.length > 0) throw new FlowInputError(`the screen ${view.screen} has no field ${unknown.map((k) => `"${k}"`).join(', ')}`);
  return out;
}
