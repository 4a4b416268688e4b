/**
 * A live flow in the terminal chat: each screen the Flow endpoint answers printed as the phone
 * shows it (its title, its data's plain values, an error on it, its fields with numbered choices),
 * and the lines typed while it is open taken as that screen's answers, field by field: a choice by
 * its number, id or title; `ok` on a screen without fields; JSON on a screen the bot declares no
 * form for. The screen is submitted once every field is answered.
 */
import { FlowInputError, LiveFlow, type FlowEndpointAccess, type FlowScreenView, type FlowStep, type ScreenField } from './chat-flow.js';
import type { FlowForm } from '../conversation/bot.js';

/** The prefix of a flow screen's first line. */
export const FORM_PREFIX = 'form › ';
const INDENT = ' '.repeat(FORM_PREFIX.length);

/** An open live flow in the chat. */
export class ChatForm {
  #answers: Record<string, unknown> = {};
  #field = 0;

  private constructor(
    private readonly flow: LiveFlow,
    private readonly out: (text: string) => void,
  ) {}

  /** Opens the flow of `token` (INIT) and prints its first screen; undefined when it did not open. */
  static async open(access: FlowEndpointAccess, token: string, form: FlowForm | undefined, out: (text: string) => void): Promise<{ form: ChatForm | undefined; step: FlowStep }> {
    const chat = new ChatForm(new LiveFlow(access, token, form), out);
    const step = await chat.flow.open();
    chat.show(step);
    return { form: step.kind === 'screen' ? chat : undefined, step };
  }

  /** The flow's token. */
  get token(): string {
    return this.flow.token;
  }

  /**
   * Takes one typed line as the current field's answer; resolves to the step when the screen was
   * submitted. An answer the screen does not take is said, and asked again; nothing is sent.
   */
  async answer(line: string): Promise<FlowStep | undefined> {
    try {
      return await this.take(line);
    } catch (err) {
      if (!(err instanceof FlowInputError)) throw err;
      this.out(`! ${err.message}\n`);
      return undefined;
    }
  }

  private async take(line: string): Promise<FlowStep | undefined> {
    const screen = this.flow.step;
    if (screen?.kind !== 'screen') return undefined;
    if (!screen.declared) return this.submit(parseJson(line));
    const field = screen.fields[this.#field];
    if (field === undefined) {
      if (!/^(ok|continue|yes|1)$/i.test(line.trim())) throw new FlowInputError('type ok to submit this screen (/back goes back, /close closes the form)');
      return this.submit(this.#answers);
    }
    const value = typedValue(field, line.trim());
    if (value !== undefined) this.#answers[field.name] = value;
    this.#field++;
    if (this.#field < screen.fields.length) {
      this.out(`${promptLines(screen.fields[this.#field]!).join('\n')}\n`);
      return undefined;
    }
    return this.submit(this.#answers);
  }

  /** WhatsApp's back arrow: the previous screen again; false on the first screen. */
  back(): boolean {
    const prev = this.flow.back();
    if (prev === undefined) return false;
    this.show(prev);
    return true;
  }

  /** Prints the current screen again (its first field's question). */
  reprint(): void {
    const step = this.flow.step;
    if (step) this.show(step);
  }

  private async submit(values: Record<string, unknown>): Promise<FlowStep> {
    try {
      const step = await this.flow.submit(values);
      this.show(step);
      return step;
    } catch (err) {
      // The screen refused the answers as a whole: say why, then ask it again from its first field.
      if (!(err instanceof FlowInputError)) throw err;
      this.out(`! ${err.message}\n`);
      this.reprint();
      return this.flow.step!;
    }
  }

  /** Prints a step; a screen resets the answers to ask its fields from the first. */
  private show(step: FlowStep): void {
    if (step.kind !== 'screen') {
      this.out(`${FORM_PREFIX}${stepLine(step)}\n`);
      // The endpoint failed: the phone stays on the screen, to be submitted again.
      if (step.kind === 'failed') this.reprint();
      return;
    }
    this.#answers = {};
    this.#field = 0;
    this.out(`${screenLines(step).join('\n')}\n`);
  }
}

/** What a flow's end says in the chat. */
export function stepLine(step: Exclude<FlowStep, FlowScreenView>): string {
  if (step.kind === 'complete') return `(the form closed: done${Object.keys(step.params).length ? `, ${JSON.stringify(step.params)}` : ''}; WhatsApp now sends its answer to the bot)`;
  if (step.kind === 'closed') return `${step.message}\n${INDENT}(the form's button is disabled: it cannot be opened again)`;
  return `! ${step.message}`;
}

/** A screen as the chat prints it, the first field's question last. */
export function screenLines(s: FlowScreenView): string[] {
  const lines = [`${FORM_PREFIX}${s.title}${s.title === s.screen ? '' : ` (${s.screen})`}`];
  for (const v of s.values) lines.push(`${INDENT}${v.name}: ${v.text}`);
  if (s.error !== undefined) lines.push(`${INDENT}! ${s.error}`);
  const back = s.canGoBack ? '/back goes back, ' : '';
  if (!s.declared) lines.push(`${INDENT}(no form is declared for this screen: type its answers as JSON, e.g. {"field": "value"}; ${back}/close closes it)`);
  else if (s.fields.length === 0) lines.push(`${INDENT}[ Continue ]  (type ok; ${back}/close closes the form)`);
  else {
    lines.push(...promptLines(s.fields[0]!));
    lines.push(`${INDENT}(${s.fields.length > 1 ? 'each field in turn; ' : ''}${back}/close closes the form)`);
  }
  return lines;
}

/** One field's question: its label, then its numbered choices. */
function promptLines(f: ScreenField): string[] {
  const lines = [`${INDENT}${f.label}${f.required ? ' *' : ' (optional: - skips it)'}${f.type === 'boolean' ? ' (yes or no)' : ''}`];
  if (f.choices?.length === 0) lines.push(`${INDENT}  (no choices)`);
  f.choices?.forEach((c, i) => lines.push(`${INDENT}  ${i + 1}. ${c.title}${c.id === c.title ? '' : `  [${c.id}]`}`));
  return lines;
}

/** A typed answer as the field's value: a choice's id by number, id or title; undefined to skip. */
function typedValue(f: ScreenField, text: string): unknown {
  if (text === '-' && !f.required) return undefined;
  if (f.choices !== undefined) {
    const n = /^\d+\.?$/.test(text) ? Number.parseInt(text, 10) : Number.NaN;
    const c = f.choices[n - 1] ?? f.choices.find((x) => x.id === text) ?? f.choices.find((x) => x.title.toLowerCase() === text.toLowerCase());
    if (c === undefined) throw new FlowInputError(`${f.label}: "${text}" is not one of the choices: type its number (1 to ${f.choices.length}), id or title`);
    return c.id;
  }
  if (f.type === 'boolean') return /^(y|yes|true|1)$/i.test(text);
  if (f.type === 'number') {
    const n = Number(text);
    if (text === '' || Number.isNaN(n)) throw new FlowInputError(`${f.label}: "${text}" is not a number`);
    return n;
  }
  return text;
}

function parseJson(line: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch (err) {
    throw new FlowInputError(`type this screen's answers as a JSON object, e.g. {"field": "value"} (${(err as Error).message})`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new FlowInputError('type this screen\'s answers as a JSON object, e.g. {"field": "value"}');
  return data as Record<string, unknown>;
}
