/** Transcript entries as short lines for people (the agents' API and console). */
import type { Message } from '../messages/message.js';
import type { TranscriptEntry } from '../store/types.js';

/** One line of a conversation, as an agent reads it. */
export interface TranscriptLine {
  readonly direction: 'in' | 'out';
  readonly at: number;
  /** Who wrote it: the user, the bot, an agent, or the system (handoff events, timers, delivery reports). */
  readonly from: 'user' | 'bot' | 'agent' | 'system';
  /** The agent's name, for an agent's message. */
  readonly agent?: string | undefined;
  /** The message's kind (`text`, `list`, `buttons`, `flow`, `sms`) or the event's type. */
  readonly kind: string;
  readonly text: string;
  /** For an outbound message: `pending`, `sending`, `sent` or `failed`, and the channel it went by. */
  readonly delivery?: { readonly state: string; readonly channel: string; readonly fallback: boolean } | undefined;
  /** The message itself (outbound) or the event (inbound). */
  readonly raw: unknown;
}

/** A transcript entry as a line. */
export function summarize(e: TranscriptEntry): TranscriptLine {
  if (e.direction === 'in') {
    const ev = e.event as { type: string; text?: string; title?: string; by?: string; note?: string };
    const user = e.source === 'whatsapp' || e.source === 'sms' || e.source === 'api';
    return { direction: 'in', at: e.at, from: user && !ev.type.startsWith('handoff.') ? 'user' : 'system', kind: ev.type, text: inboundText(ev), raw: e.event };
  }
  const r = e.record;
  const m = r.message as Message;
  const agent = r.agent ?? undefined;
  return {
    direction: 'out',
    at: e.at,
    from: agent !== undefined ? 'agent' : 'bot',
    ...(agent !== undefined && { agent }),
    kind: r.kind,
    text: messageText(m),
    delivery: { state: r.deliveryStatus ?? r.state, channel: r.channel, fallback: r.fallbackOf !== null },
    raw: m,
  };
}

function inboundText(ev: { type: string; text?: string; title?: string; by?: string; note?: string }): string {
  if (ev.type === 'text') return ev.text ?? '';
  if (ev.type.startsWith('reply.')) return ev.title ?? ev.type.slice('reply.'.length);
  if (ev.type === 'flow') return '(a flow was submitted)';
  if (ev.type === 'handoff.ended') return `released by ${ev.by ?? '?'}${ev.note ? `: ${ev.note}` : ''}`;
  if (ev.type === 'handoff.timeout') return 'no agent claimed the handoff in time';
  return `(${ev.type})`;
}

/** The text a person reads for a message. */
export function messageText(m: Message): string {
  switch (m.kind) {
    case 'text':
    case 'sms':
      return m.text;
    case 'list':
      return m.listMessages.body;
    case 'buttons':
      return m.replyButtons.body;
    case 'flow':
      return m.flow.body ?? '(a flow)';
    default:
      return '';
  }
}
