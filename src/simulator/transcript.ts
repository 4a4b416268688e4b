/**
 * Transcript checks: record what a user did and what the bot answered, replay the user's actions
 * on a fresh harness later, and fail with a line diff when the bot's behaviour changed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Bot } from '../conversation/bot.js';
import { BotTurnError, createTestBot, type TestConversation } from './harness.js';
import type { TestBotOptions } from './harness-world.js';
import { diffLines, formatDiff, hasChanges } from './transcript-diff.js';
import { asSteps, transcriptLines, type AgentAction, type TranscriptAction, type TranscriptStep } from './transcript-format.js';

/** The environment variable that makes {@link expectTranscript} rewrite its files. */
export const UPDATE_TRANSCRIPTS_ENV = 'COLLOQUY_UPDATE_TRANSCRIPTS';

/** Thrown when a conversation no longer matches its transcript; `diff` has the changed lines. */
export class TranscriptMismatchError extends Error {
  override name = 'TranscriptMismatchError';
  constructor(
    message: string,
    readonly diff: string,
    readonly actual: readonly TranscriptStep[],
  ) {
    super(message);
  }
}

/** The conversation's steps so far, as plain JSON: each action, the bot's answer, the state. */
export function recordTranscript(conv: TestConversation): TranscriptStep[] {
  return JSON.parse(JSON.stringify(conv.steps)) as TranscriptStep[];
}

/**
 * Replays the recorded user actions on a fresh harness of `bot` and throws a
 * {@link TranscriptMismatchError} with a line diff (`-` recorded, `+` now) when anything the bot
 * sent, or a state it reached, differs. Resolves to the new steps when they match.
 */
export async function replayTranscript(bot: Bot, recorded: readonly TranscriptStep[] | { readonly steps: readonly TranscriptStep[] }, options: TestBotOptions = {}): Promise<TranscriptStep[]> {
  const expected = asSteps(recorded, 'replayTranscript');
  const conv = await createTestBot(bot, options);
  try {
    const actual = await replaySteps(conv, expected);
    compareSteps(expected, actual, `bot "${bot.id}"`);
    return actual;
  } finally {
    await conv.close();
  }
}

/**
 * Compares the conversation with the transcript in `file` (JSON). Writes the file when it does
 * not exist yet, or when `COLLOQUY_UPDATE_TRANSCRIPTS=1`; otherwise throws a
 * {@link TranscriptMismatchError} with a line diff when they differ.
 */
export function expectTranscript(conv: TestConversation, file: string): void {
  const path = resolve(file);
  const actual = recordTranscript(conv);
  if (process.env[UPDATE_TRANSCRIPTS_ENV] === '1' || !existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, `${JSON.stringify({ bot: conv.bot.id, user: conv.user, steps: actual }, null, 2)}\n`);
    return;
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read the transcript ${file}: ${(err as Error).message}`, { cause: err });
  }
  compareSteps(asSteps(json, file), actual, file);
}

/** Does each action on `conv`; stops at the first action that cannot be done. */
async function replaySteps(conv: TestConversation, steps: readonly TranscriptStep[]): Promise<TranscriptStep[]> {
  for (const step of steps) {
    try {
      if (step.waited === true) await conv.untilInvocationsSettle();
      await perform(conv, step.action);
    } catch (err) {
      if (err instanceof BotTurnError) continue; // recorded in conv.steps with its error
      const reason = (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
      return [...conv.steps, { action: step.action, sent: [], state: conv.state ?? null, error: reason }];
    }
  }
  return [...conv.steps];
}

/** Does one recorded action. */
export async function perform(conv: TestConversation, a: TranscriptAction): Promise<void> {
  if ('tap' in a) return conv.tap(a.tap);
  if ('type' in a) return conv.type(a.type);
  if ('flow' in a) return conv.submitFlow(a.flow);
  if ('sms' in a) return conv.sms(a.sms);
  if ('send' in a) return conv.send(a.send, a.source);
  if ('advance' in a) return conv.advance(a.advance);
  if ('settle' in a) return conv.settled();
  if ('agent' in a) return performAgent(conv, a);
  throw new Error(`Unknown transcript action ${JSON.stringify(a)}`);
}

function performAgent(conv: TestConversation, a: AgentAction): Promise<void> {
  const agent = conv.agent(a.agent);
  if (a.claim) return agent.claim();
  if (a.reply !== undefined) return agent.reply(a.reply as never);
  return agent.release(typeof a.release === 'string' ? a.release : undefined);
}

function compareSteps(expected: readonly TranscriptStep[], actual: readonly TranscriptStep[], where: string): void {
  const lines = diffLines(transcriptLines(expected), transcriptLines(actual));
  if (!hasChanges(lines)) return;
  const diff = formatDiff(lines);
  throw new TranscriptMismatchError(
    `The conversation no longer matches its transcript (${where}).\n(- recorded, + now)\n${diff}\n` + `If the new behaviour is right, run with ${UPDATE_TRANSCRIPTS_ENV}=1 to record it again.`,
    diff,
    actual,
  );
}
