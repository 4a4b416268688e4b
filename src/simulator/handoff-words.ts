/**
 * What a customer's chat says about a handoff (a conversation handed to a person), in the words
 * both the terminal chat and the web simulator use: the handoff as it is now, the moments of its
 * history (from the handoff log, or the handoff's record when it predates the log), where the
 * user's messages went, and an agent's name above the agent's messages. Internal notes are
 * never among them: the user never sees what agents write to each other.
 */
import type { HandoffLogEntry } from '../store/agent-types.js';
import type { HandoffRecord, HandoffState } from '../store/handoff-types.js';
import { formatDuration } from './harness-duration.js';

/** What the chat says when the handoff it showed is gone (released or timed out) and it knows no more. */
export const BOT_BACK = 'the bot has this chat back';

/**
 * A moment of a handoff the chat marks: a person takes over, an agent claims it, the claim went
 * back to the queue (`requeued`), and how it ended.
 */
export type HandoffMoment = 'started' | 'claimed' | 'requeued' | Exclude<HandoffState, 'waiting' | 'claimed'>;

/** A line of a handoff's history. */
export interface HandoffMark {
  readonly moment: HandoffMoment;
  readonly at: number;
  readonly text: string;
  /** Who claimed, lost the claim or released (null for the system's moments). */
  readonly agent: string | null;
}

/** The moments that end a handoff. */
export const END_MOMENTS: ReadonlySet<HandoffMoment> = new Set(['ended', 'timeout', 'closed']);

/** The handoff as it is at `now`: `a person takes over this chat (queue wifi): waiting for an agent; it times out in 10m`, `ana has this chat`, … */
export function handoffNow(h: HandoffRecord, now: number): string {
  if (h.state === 'claimed') return claimedText(h.agent);
  if (h.state !== 'waiting') return endText(h.state, h.endedBy ?? h.agent);
  const left = h.timeoutAt === null ? '' : `; it times out in ${timeLeft(h.timeoutAt - now)}`;
  // Waiting with an agent: a claim that went back to the queue (the record keeps who last held it).
  const what = h.agent === null ? startedText(h) : `the chat is back in the queue${h.queue ? ` (queue ${h.queue})` : ''}`;
  return `${what}: waiting for an agent${left}`;
}

/**
 * What happened to a handoff so far, oldest first: from `log` (the handoff log's entries of this
 * handoff) when it has any, else from the record alone (a handoff older than the log: its last
 * claim only). Messages and internal notes make no line.
 */
export function handoffHistory(h: HandoffRecord, log: readonly HandoffLogEntry[] = []): HandoffMark[] {
  const started: HandoffMark = { moment: 'started', at: h.startedAt, text: startedText(h), agent: null };
  const own = log.filter((e) => e.handoffId === h.id);
  const marks = own.length > 0 ? [started, ...own.flatMap(markOf)] : [started, ...claimOf(h)];
  // A handoff that ended before its end was logged (the log is newer than it) still ends.
  if (!marks.some((m) => END_MOMENTS.has(m.moment)) && h.endedAt !== null && h.state !== 'waiting' && h.state !== 'claimed') {
    marks.push({ moment: h.state, at: h.endedAt, text: endText(h.state, h.endedBy ?? h.agent), agent: h.state === 'ended' ? (h.endedBy ?? h.agent) : null });
  }
  return marks;
}

/** Why a claim went back to the queue, for the user: `ana did not answer in time: the chat is back in the queue`. */
export function requeuedText(agent: string | null, reason: string | null): string {
  const who = agent ?? 'the agent';
  return reason === 'agent_removed' ? `${who} is no longer available: the chat is back in the queue` : `${who} did not answer in time: the chat is back in the queue`;
}

/** Where a user's message went during a handoff instead of to the bot: `went to ana, who has this chat`, or (waiting, `agent` null) to whoever takes it. */
export function heldText(agent: string | null): string {
  return agent === null ? 'went to the person who takes over this chat' : `went to ${agent}, who has this chat`;
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

/** A log entry's line; none for a message (its bubble shows it) or an internal note (the user never sees it). */
function markOf(e: HandoffLogEntry): HandoffMark[] {
  switch (e.action) {
    case 'claim':
      return [{ moment: 'claimed', at: e.at, text: claimedText(e.agent), agent: e.agent }];
    case 'claim_expired':
      return [{ moment: 'requeued', at: e.at, text: requeuedText(e.agent, e.text), agent: e.agent }];
    case 'release':
      // A release's text is its note to the other agents: never the user's to read.
      return [{ moment: 'ended', at: e.at, text: endText('ended', e.agent), agent: e.agent }];
    case 'timeout':
    case 'closed':
      return [{ moment: e.action, at: e.at, text: endText(e.action, null), agent: null }];
    default:
      return [];
  }
}

function claimOf(h: HandoffRecord): HandoffMark[] {
  return h.claimedAt !== null && h.agent !== null ? [{ moment: 'claimed', at: h.claimedAt, text: claimedText(h.agent), agent: h.agent }] : [];
}

function startedText(h: HandoffRecord): string {
  return `a person takes over this chat${h.queue ? ` (queue ${h.queue})` : ''}`;
}

function claimedText(agent: string | null): string {
  return `${agent ?? 'an agent'} has this chat`;
}

function endText(state: 'ended' | 'timeout' | 'closed', by: string | null): string {
  if (state === 'ended') return `${by ?? 'the agent'} handed the chat back to the bot`;
  return state === 'timeout' ? 'no agent claimed the chat in time: the bot has it back' : 'the handoff closed with the conversation';
}
