/**
 * What a customer's chat says about a handoff (a conversation handed to a person), in the words
 * both the terminal chat and the web simulator use: the handoff as it is now, the moments of its
 * history, and an agent's name above the agent's messages.
 */
import type { HandoffRecord, HandoffState } from '../store/handoff-types.js';
import { formatDuration } from './harness-duration.js';

/** What the chat says when the handoff it showed is gone (released or timed out) and it knows no more. */
export const BOT_BACK = 'the bot has this chat back';

/** A moment of a handoff the chat marks: a person takes over, an agent claims it, and how it ended. */
export type HandoffMoment = 'started' | 'claimed' | Exclude<HandoffState, 'waiting' | 'claimed'>;

/** A line of a handoff's history. */
export interface HandoffMark {
  readonly moment: HandoffMoment;
  readonly at: number;
  readonly text: string;
}

/** The handoff as it is at `now`: `a person takes over this chat (queue wifi): waiting for an agent; it times out in 10m`, `ana has this chat`, … */
export function handoffNow(h: HandoffRecord, now: number): string {
  if (h.state !== 'waiting') return momentText(h, h.state);
  const left = h.timeoutAt === null ? '' : `; it times out in ${timeLeft(h.timeoutAt - now)}`;
  return `${momentText(h, 'started')}: waiting for an agent${left}`;
}

/** What happened to a handoff so far, oldest first (who has the chat last, if it was claimed). */
export function handoffHistory(h: HandoffRecord): HandoffMark[] {
  const marks: HandoffMark[] = [{ moment: 'started', at: h.startedAt, text: momentText(h, 'started') }];
  if (h.claimedAt !== null && h.agent !== null) marks.push({ moment: 'claimed', at: h.claimedAt, text: momentText(h, 'claimed') });
  if (h.endedAt !== null && (h.state === 'ended' || h.state === 'timeout' || h.state === 'closed')) marks.push({ moment: h.state, at: h.endedAt, text: momentText(h, h.state) });
  return marks;
}

/** Whose message it is, above an agent's message: `ana (agent)`, `ana (agent, by SMS)`. */
export function agentByline(agent: string, bySms: boolean): string {
  return bySms ? `${agent} (agent, by SMS)` : `${agent} (agent)`;
}

/** Time left for people: whole minutes (rounded up) from a minute on, seconds below; `0s` once past. */
export function timeLeft(ms: number): string {
  if (ms <= 0) return '0s';
  return ms >= 60_000 ? formatDuration(Math.ceil(ms / 60_000) * 60_000) : formatDuration(Math.ceil(ms / 1000) * 1000);
}

function momentText(h: HandoffRecord, moment: HandoffMoment): string {
  switch (moment) {
    case 'started':
      return `a person takes over this chat${h.queue ? ` (queue ${h.queue})` : ''}`;
    case 'claimed':
      return `${h.agent ?? 'an agent'} has this chat`;
    case 'ended':
      return `${h.endedBy ?? h.agent ?? 'the agent'} handed the chat back to the bot`;
    case 'timeout':
      return 'no agent claimed the chat in time: the bot has it back';
    default:
      return 'the handoff closed with the conversation';
  }
}
