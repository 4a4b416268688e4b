/**
 * What the user was last offered (a list's rows or reply buttons, from the bot or an agent) and
 * which of them they tapped since, read from the conversation's transcript. The inbox shows it so
 * an agent sees the choices the user had without scrolling back.
 */
import { choicesOf, type Message } from '../messages/message.js';
import type { TranscriptEntry } from '../store/types.js';

/** One choice of an offer: a list row (with its section's title) or a reply button. */
export interface OfferedChoice {
  readonly id: string;
  readonly title: string;
  readonly description?: string | undefined;
  /** The list section the row is in, when it has a title. */
  readonly section?: string | undefined;
}

/** The tap that answered an offer. */
export interface OfferedTap {
  readonly id: string;
  readonly title: string;
  /** How the user answered: `button`, `list`, or `sms` (a number or a title typed back). */
  readonly via: string;
  readonly at: number;
}

/** The last list or buttons the user was sent, and the choice they made after it (null: none yet). */
export interface Offered {
  readonly kind: 'list' | 'buttons';
  /** Who offered it: the bot, or an agent (then `agent` names them). */
  readonly from: 'bot' | 'agent';
  readonly agent?: string | undefined;
  readonly at: number;
  /** The outbox row of the message. */
  readonly outboxId: number;
  readonly body: string;
  /** A list's button label. */
  readonly button?: string | undefined;
  readonly choices: readonly OfferedChoice[];
  readonly tapped: OfferedTap | null;
}

/**
 * The last offer in `transcript` (oldest first) and its answer. A tap counts when it came after the
 * offer and names one of its choices (a tap on an older message's button is not an answer to it);
 * the first such tap wins. Messages sent again as SMS fallbacks are the same offer, not a new one.
 */
export function lastOffered(transcript: readonly TranscriptEntry[]): Offered | null {
  let at = -1;
  for (let i = transcript.length - 1; i >= 0; i--) {
    const e = transcript[i]!;
    if (e.direction === 'out' && e.record.fallbackOf === null && (e.record.kind === 'list' || e.record.kind === 'buttons')) {
      at = i;
      break;
    }
  }
  if (at < 0) return null;
  const entry = transcript[at] as Extract<TranscriptEntry, { direction: 'out' }>;
  const message = entry.record.message as Message;
  const choices = choicesIn(message);
  const ids = new Set(choices.map((c) => c.id));
  let tapped: OfferedTap | null = null;
  for (const e of transcript.slice(at + 1)) {
    const tap = e.direction === 'in' ? tapOf(e.event) : undefined;
    if (tap && ids.has(tap.id)) {
      tapped = { ...tap, at: e.at };
      break;
    }
  }
  const agent = entry.record.agent ?? undefined;
  return {
    kind: message.kind === 'list' ? 'list' : 'buttons',
    from: agent === undefined ? 'bot' : 'agent',
    ...(agent !== undefined && { agent }),
    at: entry.at,
    outboxId: entry.record.id,
    body: message.kind === 'list' ? message.listMessages.body : message.kind === 'buttons' ? message.replyButtons.body : '',
    ...(message.kind === 'list' && { button: message.listMessages.buttonText }),
    choices,
    tapped,
  };
}

/** The choices, list rows with their section's title. */
function choicesIn(m: Message): OfferedChoice[] {
  if (m.kind !== 'list') return choicesOf(m).map((c) => ({ id: c.id, title: c.title }));
  return m.listMessages.sections.flatMap((s) =>
    s.messages.map((r) => ({
      id: r.id,
      title: r.title,
      ...(r.description !== undefined && { description: r.description }),
      ...(s.title !== undefined && { section: s.title }),
    })),
  );
}

/** A `reply.<id>` event: a tap on a button or row, or an SMS matched to a choice. */
function tapOf(event: unknown): Omit<OfferedTap, 'at'> | undefined {
  const ev = event as { type?: unknown; id?: unknown; title?: unknown; via?: unknown } | null;
  if (typeof ev?.type !== 'string' || !ev.type.startsWith('reply.')) return undefined;
  const id = typeof ev.id === 'string' ? ev.id : ev.type.slice('reply.'.length);
  return { id, title: typeof ev.title === 'string' ? ev.title : id, via: typeof ev.via === 'string' ? ev.via : 'button' };
}
