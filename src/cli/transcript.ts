/**
 * `colloquy transcript <conversation id>`: a conversation read back in order, both directions,
 * with what became of each inbound and each message's delivery.
 */
import { ColloquyError } from '../errors.js';
import { stateLabel } from '../conversation/stranded.js';
import { choicesOf, type Message } from '../messages/message.js';
import type { ConversationRecord, OutboxRecord, TranscriptEntry } from '../store/types.js';
import { iso } from './conversations.js';
import { databaseTarget, openExistingStore } from './store-target.js';
import type { Io } from './io.js';

/** Prints the transcript; resolves to the exit code (1 when there is no such conversation). */
export async function transcriptCommand(args: readonly string[], o: { db?: string | undefined }, io: Io): Promise<number> {
  const [arg, ...extra] = args;
  const id = Number(arg);
  if (arg === undefined || extra.length || !Number.isSafeInteger(id) || id < 1) throw new ColloquyError('usage', 'usage: colloquy transcript <conversation id> [--db <file>]');
  const store = await openExistingStore(databaseTarget(o.db, io));
  try {
    const conv = await store.conversation(id);
    if (!conv) throw new ColloquyError('not_found', `no conversation ${id}`);
    const entries = await store.transcript(id);
    io.out(io.json ? `${JSON.stringify({ conversation: conv, entries }, null, 2)}\n` : transcriptText(conv, entries));
    return 0;
  } finally {
    await store.close();
  }
}

/** The readable transcript: a header, then one line per inbound and per message. */
export function transcriptText(c: ConversationRecord, entries: readonly TranscriptEntry[]): string {
  const head =
    `Conversation ${c.id} · bot ${c.botId} v${c.botVersion} · user ${c.user} · ${c.status} · state ${stateLabel(c)} · ${c.channel}\n` +
    `started ${iso(c.createdAt)} · last activity ${iso(c.lastActivityAt)}${c.endedAt === null ? '' : ` · ended ${iso(c.endedAt)}`}\n`;
  if (entries.length === 0) return `${head}(nothing in or out yet)\n`;
  return head + entries.map((e) => (e.direction === 'in' ? inLine(e) : outLine(e.record))).join('\n') + '\n';
}

function inLine(e: Extract<TranscriptEntry, { direction: 'in' }>): string {
  const outcome = e.state === 'failed' ? `  ✗ failed: ${e.error ?? ''}` : e.state === 'pending' ? '  (pending)' : e.error ? `  (${e.error})` : '';
  return `${iso(e.at)}  ← ${e.source.padEnd(8)} ${eventText(e.event as { type: string; [k: string]: unknown })}${outcome}`;
}

/** An inbound event for people: `tap "Large" (reply.large, button)`, `text "hi"`. */
function eventText(ev: { type: string; [k: string]: unknown }): string {
  if (ev.type.startsWith('reply.')) return `tap ${JSON.stringify(ev['title'] ?? ev['id'])} (${ev.type}${ev['via'] ? `, ${String(ev['via'])}` : ''})`;
  if (ev.type === 'text') return `text ${JSON.stringify(ev['text'])}`;
  if (ev.type === 'flow') return `flow submitted ${JSON.stringify(ev['data'] ?? {})}`;
  if (ev.type === 'delivery.failed') return `delivery failed (${String(ev['channel'])}: ${String(ev['reason'])})`;
  if (ev.type.startsWith('xstate.after.')) return `timer ${ev.type.slice('xstate.after.'.length)}`;
  return JSON.stringify(ev);
}

function outLine(r: OutboxRecord): string {
  const by = r.agent ? ` (agent ${r.agent})` : '';
  return `${iso(r.createdAt)}  → ${r.channel.padEnd(11)} ${messageText(r.message as Message)}${by}${r.fallbackOf === null ? '' : ` (SMS fallback of #${r.fallbackOf})`}  ${deliveryText(r)}`;
}

/** A message for people: its kind, its text, its choices. */
function messageText(m: Message): string {
  const body =
    m.kind === 'text' || m.kind === 'sms'
      ? m.text
      : m.kind === 'list'
        ? m.listMessages.body
        : m.kind === 'buttons'
          ? m.replyButtons.body
          : m.kind === 'template'
            ? `template ${m.template.name} (${m.template.language.code})`
            : m.flow.body;
  let choices = '';
  try {
    const list = choicesOf(m);
    if (list.length) choices = ` [${list.map((c) => `${c.id}=${JSON.stringify(c.title)}`).join(', ')}]`;
  } catch {
    /* a flow has no choices */
  }
  return `${m.kind} ${JSON.stringify(body)}${choices}`;
}

/** What became of a message: sent (with the provider's id and the furthest status), failed (why), or waiting. */
function deliveryText(r: OutboxRecord): string {
  if (r.state === 'sent') {
    const sms = r.smsResult ? ` SMS ${r.smsResult}` : '';
    return `✓ sent${r.providerId ? ` ${r.providerId}` : ''}${sms}${r.deliveryStatus ? ` · ${r.deliveryStatus}` : ''} (attempt ${r.attempts})`;
  }
  if (r.state === 'failed') return `✗ failed after ${r.attempts} attempt${r.attempts === 1 ? '' : 's'}: ${r.error ?? r.errorCode ?? 'unknown'}${r.errorCode ? ` [${r.errorCode}]` : ''}`;
  return `… ${r.state}${r.error ? ` (last error: ${r.error})` : ''}`;
}
