/**
 * A handoff as the customer's page shows it: a banner while a person holds the conversation (or is
 * about to), system lines in the chat when a person takes over, an agent claims it, a claim goes
 * back to the queue and the bot has it back (in the terminal chat's words, from the handoff log),
 * and which of the user's messages went to a person instead of the bot.
 */
import type { HandoffLogEntry } from '../../store/agent-types.js';
import type { HandoffRecord } from '../../store/handoff-types.js';
import type { TranscriptEntry } from '../../store/types.js';
import { END_MOMENTS, handoffHistory, handoffNow, type HandoffMark, type HandoffMoment } from '../handoff-words.js';

/** The banner over the chat while a handoff is open. */
export interface HandoffView {
  readonly id: number;
  /** `waiting` for an agent, or `claimed` by one. */
  readonly state: 'waiting' | 'claimed';
  readonly queue: string | null;
  /** The agent who has the chat (claimed). */
  readonly agent: string | null;
  readonly startedAt: number;
  readonly claimedAt: number | null;
  /** When it times out if nobody claims it (waiting). */
  readonly timeoutAt: number | null;
  /** For people: `a person takes over this chat (queue wifi): waiting for an agent; it times out in 10m`, `ana has this chat`. */
  readonly text: string;
}

/** A system line of the chat about a handoff. */
export interface HandoffNote {
  readonly kind: 'note';
  readonly at: number;
  readonly text: string;
  /** Which moment of a handoff the line marks. */
  readonly handoff: HandoffMoment;
}

/** The banner of an open handoff at `now`; null when none is open. */
export function handoffView(h: HandoffRecord | undefined, now: number): HandoffView | null {
  if (h === undefined || (h.state !== 'waiting' && h.state !== 'claimed')) return null;
  return {
    id: h.id,
    state: h.state,
    queue: h.queue,
    agent: h.state === 'claimed' ? h.agent : null,
    startedAt: h.startedAt,
    claimedAt: h.claimedAt,
    timeoutAt: h.state === 'waiting' ? h.timeoutAt : null,
    text: handoffNow(h, now),
  };
}

/** Who a user's message went to: an agent, the queue (null: waiting for one), or the bot (undefined). */
type Holder = string | null | undefined;

/** A handoff's mark, its line, and where it goes in the chat (before `entries[index]`). */
interface Placed {
  readonly index: number;
  readonly mark: HandoffMark;
  readonly note: HandoffNote;
}

/**
 * A conversation's chat with its handoffs' lines in place: `items[i]` is what `entries[i]` (the
 * transcript, in commit order) shows, if anything; `log` is the conversation's handoff log. A
 * handoff's end goes where its `handoff.ended` or `handoff.timeout` reached the conversation; its
 * other moments go by time before that, after what happened at or before the same moment, except
 * that within one millisecond an agent's message is known to follow them. `held` marks an item
 * written while a person had the chat or was about to (who it went to instead of the bot).
 */
export function withHandoffs<T>(
  entries: readonly TranscriptEntry[],
  items: readonly (T | undefined)[],
  handoffs: readonly HandoffRecord[],
  log: readonly HandoffLogEntry[] = [],
  held: (item: T, holder: string | null) => T = (item) => item,
): (T | HandoffNote)[] {
  const at = placed(entries, handoffs, log);
  const out: (T | HandoffNote)[] = [];
  let holder: Holder;
  let n = 0;
  for (let i = 0; i <= entries.length; i++) {
    for (; n < at.length && at[n]!.index === i; n++) {
      out.push(at[n]!.note);
      holder = holderAfter(at[n]!.mark);
    }
    const item = items[i];
    if (item !== undefined) out.push(holder === undefined ? item : held(item, holder));
  }
  return out;
}

/** Each handoff's marks with where they go in the chat, in order. */
function placed(entries: readonly TranscriptEntry[], handoffs: readonly HandoffRecord[], log: readonly HandoffLogEntry[]): Placed[] {
  const at: Placed[] = [];
  let from = 0;
  for (const h of handoffs) {
    const end = endOf(entries, h, from);
    let last = from;
    for (const m of handoffHistory(h, log)) {
      last = END_MOMENTS.has(m.moment) ? (end ?? byTime(entries, m.at, last, entries.length)) : byTime(entries, m.at, last, end ?? entries.length);
      at.push({ index: last, mark: m, note: { kind: 'note', at: m.at, text: m.text, handoff: m.moment } });
    }
    from = last;
  }
  return at;
}

function holderAfter(m: HandoffMark): Holder {
  if (END_MOMENTS.has(m.moment)) return undefined;
  return m.moment === 'claimed' ? (m.agent ?? 'an agent') : null;
}

/** Where a released or timed-out handoff's end reached the conversation (its `handoff.ended` inbound, or the timer's `handoff.timeout`) at or after `from`. */
function endOf(entries: readonly TranscriptEntry[], h: HandoffRecord, from: number): number | undefined {
  if (h.state !== 'ended' && h.state !== 'timeout') return undefined;
  for (let i = from; i < entries.length; i++) {
    const e = entries[i]!;
    // Handoffs follow one another: the first of these events after the handoff started is its own.
    if (e.direction === 'in' && e.source === (h.state === 'ended' ? 'internal' : 'timer') && (e.event as { type?: unknown } | null)?.type === `handoff.${h.state}`) return i;
  }
  return undefined;
}

/** The place in `[lo, hi]` of a moment at `t`: after the entries before it in time, before those after it. */
function byTime(entries: readonly TranscriptEntry[], t: number, lo: number, hi: number): number {
  let i = hi;
  while (i > lo && follows(entries[i - 1]!, t)) i--;
  return i;
}

function follows(e: TranscriptEntry, t: number): boolean {
  if (e.at !== t) return e.at > t;
  return e.direction === 'out' && typeof e.record.agent === 'string';
}
