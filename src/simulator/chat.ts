/**
 * A chat with a bot in a terminal: the harness underneath (real runtime, sandbox, manual clock),
 * each message the bot sends printed as a phone shows it (an invocation's answer too, when it
 * arrives), each line typed turned into a tap, a text, an SMS, a flow answer or a clock move.
 */
import { matchSmsReply } from '../messages/sms.js';
import type { Choice } from '../messages/message.js';
import { clearLine, createInterface, cursorTo } from 'node:readline';
import type { Bot } from '../conversation/bot.js';
import { formatDuration, parseDuration } from './harness-duration.js';
import { BotTurnError, createTestBot, type TestConversation } from './harness.js';
import { DEFAULT_TEST_USER, type TestBotOptions } from './harness-world.js';
import { renderSent } from './render.js';
import { CloudMarks } from './cloud-sandbox.js';
import { ChatLiveFlows } from './chat-live.js';
import { agentCommand, byWhom, handoffLine, heldLine } from './chat-agent.js';
import type { HandoffRecord } from '../store/handoff-types.js';
import type { FlowBody } from '../messages/schema.js';

/** What a chat needs. */
export interface ChatOptions {
  readonly bot: Bot;
  /** Where the chat prints (each call one or more whole lines). */
  readonly out: (text: string) => void;
  /** Harness options (the user's number, the clock's start, …). */
  readonly harness?: TestBotOptions | undefined;
  /**
   * Called before and after the chat prints on its own, between lines typed (an invocation's
   * answer arriving): a terminal clears its prompt line, then shows the prompt again.
   */
  readonly unprompted?: { readonly before: () => void; readonly after: () => void } | undefined;
}

/** The commands, for `/help`. */
export const CHAT_HELP = `  1, 2, …         tap that choice of the last message (or type its title), as an SMS reply would
  /open           open the last live form (its screens come from the bot's Flow endpoint)
  /back, /close   while a live form is open: its previous screen; close it without sending
  /flow {json}    submit a form that is not live with these answers
  /sms <text>     answer by SMS
  /type <text>    send text on WhatsApp as is (even a number or a title)
  /agent claim    play the agent of a handoff: claim it, /agent reply <text>, /agent release [note]
  /wait 10m       let time pass (ms, s, m, h, d) and fire the timers that fall due
  /state          the conversation's state and context
  /restart        forget everything and start a new conversation
  /quit           leave (Ctrl+D too)
  anything else   is sent as text
`;

const flowNote = (f: FlowBody): string =>
  f.action.parameters.flow_action === 'data_exchange' ? '(a live form: /open opens it, as tapping its button does)' : '(a form: answer it with /flow {"field": "value"})';

/** One chat: a harness and the lines typed into it. */
export class ChatSession {
  /** The sequence number of the last message printed. */
  #printed = 0;
  /** On the Cloud API: the read ticks and window states shown. */
  #marks = new CloudMarks();
  /** Waits for the running invocations, then prints what they sent; undefined when none runs. */
  #watching: Promise<void> | undefined;
  #closed = false;
  /** The handoff as last shown. */
  #handoff: HandoffRecord | undefined;
  /** The live flow open on the phone, if any, and the Flow endpoint it is walked through. */
  readonly #live: ChatLiveFlows;

  private constructor(
    private conv: TestConversation,
    private readonly o: ChatOptions,
  ) {
    this.#live = new ChatLiveFlows({ conv: () => this.conv, out: o.out, andPrint: (action) => this.andPrint(action) });
  }

  /** Starts the harness and prints the greeting. */
  static async start(o: ChatOptions): Promise<ChatSession> {
    const session = new ChatSession(await createTestBot(o.bot, o.harness), o);
    const user = o.harness?.user ?? DEFAULT_TEST_USER;
    const provider = o.harness?.provider === 'cloud-api' ? 'the sandbox playing the Cloud API' : 'sandbox provider';
    o.out(`Chatting with bot "${o.bot.id}" as ${user} (${provider}, in-memory store, simulated clock).\n`);
    o.out(`Type a message to start. A number or a choice's title taps it; /help lists the commands.\n\n`);
    return session;
  }

  /** The conversation under the chat (for tools and tests: its sandbox, state, messages). */
  get conversation(): TestConversation {
    return this.conv;
  }

  /** Handles one typed line; resolves to false when the chat should end. */
  async handle(raw: string): Promise<boolean> {
    const line = raw.trim();
    if (line === '') return true;
    try {
      if (!line.startsWith('/')) await (this.#live.open ? this.#live.line(line) : this.say(line));
      else if (!(await this.command(line))) return false;
    } catch (err) {
      this.o.out(`! ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
      if (err instanceof BotTurnError) this.print(false);
    }
    this.o.out('\n');
    return true;
  }

  /** Resolves once the bot's invocations have settled and what they sent is printed. */
  async quiet(): Promise<void> {
    while (this.#watching) await this.#watching;
  }

  /** Stops the harness. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#live.dispose();
    await this.conv.close();
    await this.#watching;
  }

  private async say(line: string): Promise<void> {
    const conv = this.conv;
    const last = conv.lastInteractive;
    const bySms = conv.conversation?.channel === 'sms' || last?.channel === 'sms';
    if (bySms) return this.andPrint(conv.sms(line));
    const choices = last?.choices ?? [];
    // As by SMS: "2", "2." or a title (any case, accents, spaces), the habit real SMS replies need.
    const choice = matchSmsReply(line, choices);
    if (choice) return this.andPrint(conv.tap(choice.id));
    const byId = choices.find((c) => c.id === line.trim());
    if (byId) {
      this.o.out(`${idNote(byId, choices)}\n`);
      return this.andPrint(conv.tap(byId.id));
    }
    return this.andPrint(conv.type(line));
  }

  private async command(line: string): Promise<boolean> {
    const [, name = '', rest = ''] = /^\/(\S*)\s*(.*)$/s.exec(line) ?? [];
    switch (name.toLowerCase()) {
      case 'quit':
      case 'exit':
      case 'q':
        return false;
      case 'help':
        this.o.out(CHAT_HELP);
        return true;
      case 'state':
        this.printState();
        return true;
      case 'restart':
        await this.restart();
        return true;
      case 'wait':
        await this.wait(rest);
        return true;
      case 'flow':
        await this.andPrint(this.conv.submitFlow(parseFlow(rest)));
        return true;
      case 'open':
        await this.#live.openLatest();
        return true;
      case 'back':
        this.#live.back();
        return true;
      case 'close':
        this.#live.close();
        return true;
      case 'sms':
        await this.andPrint(this.conv.sms(required(rest, '/sms <text>')));
        return true;
      case 'type':
        await this.andPrint(this.conv.type(required(rest, '/type <text>')));
        return true;
      case 'tap':
        await this.andPrint(this.conv.tap(required(rest, '/tap <id or title>')));
        return true;
      case 'agent':
        await this.andPrint(agentCommand(this.conv, rest), false);
        return true;
      default:
        this.o.out(`! unknown command /${name}; /help lists the commands\n`);
        return true;
    }
  }

  private async wait(arg: string): Promise<void> {
    const ms = parseDuration(required(arg, '/wait 10m'));
    await this.conv.advance(ms);
    this.o.out(`(${formatDuration(ms)} later)\n`);
    this.print(false);
  }

  private async restart(): Promise<void> {
    const next = await createTestBot(this.o.bot, this.o.harness);
    const old = this.conv;
    this.conv = next;
    this.#live.forget();
    this.#printed = 0;
    this.#marks = new CloudMarks();
    await old.close();
    this.o.out('(a new conversation: type a message to start)\n');
  }

  private printState(): void {
    const c = this.conv.conversation;
    if (!c) {
      this.o.out('(no conversation yet: type a message to start)\n');
      return;
    }
    this.o.out(`state: ${c.state ?? '(none)'} (${c.status})\ncontext: ${JSON.stringify(this.conv.context, null, 2)}\n`);
  }

  private async andPrint(action: Promise<void>, sayNothing = true): Promise<void> {
    await action;
    this.print(sayNothing);
  }

  /**
   * Prints what the bot sent and the chat has not shown yet. While an invocation runs, says so
   * and prints its answer by itself when it arrives.
   */
  private print(sayNothing = true): void {
    this.printReads();
    const printed = this.printNew();
    this.printWindow();
    const handoff = handoffLine(this.#handoff, this.conv.handoff, this.conv.clock.now());
    this.#handoff = this.conv.handoff;
    if (handoff !== undefined) this.o.out(`${handoff}\n`);
    const withPerson = this.#handoff?.state === 'waiting' || this.#handoff?.state === 'claimed' ? this.#handoff : undefined;
    if (this.conv.invoking) {
      this.o.out(`(in ${this.conv.state ?? 'its state'}, the bot is working on it: the answer shows up here when it arrives)\n`);
      this.watch();
    } else if (!printed && sayNothing) this.o.out(withPerson ? `${heldLine(withPerson)}\n` : '(no answer)\n');
  }

  private printNew(): boolean {
    const fresh = this.conv.sent.filter((s) => s.seq > this.#printed);
    if (fresh.length === 0) return false;
    this.#printed = fresh.at(-1)!.seq;
    this.o.out(`${fresh.map((s) => byWhom(renderSent(s, { flowNote }), s.agent)).join('\n\n')}\n`);
    return true;
  }

  /** On the Cloud API: a tick line for each of the user's messages the bot marked read since. */
  private printReads(): void {
    for (const line of this.#marks.reads(this.conv.sandbox, this.conv.user)) this.o.out(`${line}\n`);
  }

  /** On the Cloud API: the 24-hour window's state, each time it opens or closes. */
  private printWindow(): void {
    const line = this.#marks.window(this.conv.sandbox, this.conv.user, this.conv.bot.options.phoneNumberId ?? this.conv.bot.options.sender);
    if (line !== undefined) this.o.out(`${line}\n`);
  }

  private watch(): void {
    if (this.#watching) return;
    const conv = this.conv;
    this.#watching = conv
      .untilInvocationsSettle(Infinity)
      .then(() => {
        if (this.#closed || conv !== this.conv || !conv.sent.some((s) => s.seq > this.#printed)) return;
        this.o.unprompted?.before();
        this.printNew();
        this.printWindow();
        this.o.out('\n');
        this.o.unprompted?.after();
      })
      .catch((err: unknown) => {
        if (!this.#closed && conv === this.conv) this.o.out(`! ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}\n`);
      })
      .finally(() => {
        this.#watching = undefined;
      });
  }
}

/** Tapping by id works here, not by SMS: say so, with what would. */
function idNote(choice: Choice, choices: readonly Choice[]): string {
  const n = choices.indexOf(choice) + 1;
  return `(tapped "${choice.title}" by its id; by SMS an id is not understood: reply ${n} or "${choice.title}")`;
}

/**
 * Runs a chat reading lines from `input` until `/quit` or its end. On a terminal it shows a
 * prompt; otherwise (a script piped in) it echoes each line, so the output reads as a transcript.
 */
export async function runChat(o: ChatOptions & { readonly input: NodeJS.ReadableStream; readonly output?: NodeJS.WritableStream | undefined }): Promise<void> {
  const tty = (o.input as { isTTY?: boolean }).isTTY === true && o.output !== undefined;
  let rl: ReturnType<typeof createInterface> | undefined;
  const unprompted = tty && o.output ? terminalUnprompted(o.output, () => rl) : undefined;
  const session = await ChatSession.start({ ...o, unprompted });
  rl = createInterface({ input: o.input, ...(tty && { output: o.output, terminal: true }), prompt: 'you › ' });
  rl.on('SIGINT', () => rl?.close());
  try {
    if (tty) rl.prompt();
    for await (const line of rl) {
      if (!tty) o.out(`you › ${line}\n`);
      if (!(await session.handle(line))) break;
      // A script piped in reads as a transcript: each answer, an invocation's too, before the next line.
      if (!tty) await session.quiet();
      if (tty) rl.prompt();
    }
  } finally {
    rl.close();
    await session.close();
  }
}

/** On a terminal: clear the prompt line before printing on our own, then show it again with what was typed. */
function terminalUnprompted(output: NodeJS.WritableStream, rl: () => ReturnType<typeof createInterface> | undefined): ChatOptions['unprompted'] {
  return {
    before: () => {
      clearLine(output as NodeJS.WriteStream, 0);
      cursorTo(output as NodeJS.WriteStream, 0);
    },
    after: () => rl()?.prompt(true),
  };
}

function required(arg: string, usage: string): string {
  if (arg.trim() === '') throw new Error(`usage: ${usage}`);
  return arg.trim();
}

function parseFlow(arg: string): Record<string, unknown> {
  let data: unknown;
  try {
    data = JSON.parse(arg.trim() === '' ? '{}' : arg);
  } catch (err) {
    throw new Error(`/flow takes a JSON object, e.g. /flow {"address": "1 Main St"} (${(err as Error).message})`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('/flow takes a JSON object, e.g. /flow {"address": "1 Main St"}');
  return data as Record<string, unknown>;
}
