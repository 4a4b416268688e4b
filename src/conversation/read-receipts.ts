/**
 * Read receipts with the typing indicator: when a user's WhatsApp message is accepted (or, per
 * bot, once its turn ran), the provider marks it read and shows "typing…" in one call. Never
 * twice for one message (only a first delivery is marked, and a process remembers what it
 * marked), never awaited by the turn, and a failure is logged and counted, nothing more.
 */
import { errorInfo, type Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Bot, ReadReceiptPolicy } from './bot.js';
import { numberIdOf } from '../store/inbound-facts.js';
import type { Senders } from './senders.js';

interface Deps {
  readonly senders: Senders;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly bot: (id: string) => Bot | undefined;
  /** Runs a promise in the background (idle() waits for it). */
  readonly track: (p: Promise<unknown>) => void;
}

/** A user's message that may be marked read. */
export interface Readable {
  readonly botId: string;
  readonly user: string;
  readonly providerId: string;
  readonly source: string;
  readonly raw?: unknown;
}

/** How many marked message ids a process remembers. */
const REMEMBERED = 10_000;

/** Marks users' messages read, per bot policy. */
export class ReadReceipts {
  private readonly marked = new Set<string>();

  constructor(private readonly d: Deps) {}

  /** A message was stored (not a redelivery). */
  accepted(m: Readable): void {
    this.mark(m, 'on-accept');
  }

  /** A message's turn ran. */
  handled(m: Readable): void {
    this.mark(m, 'on-handled');
  }

  private mark(m: Readable, when: ReadReceiptPolicy): void {
    if (m.source !== 'whatsapp') return;
    const bot = this.d.bot(m.botId);
    if (!bot || (bot.options.readReceipts ?? 'on-accept') !== when) return;
    const provider = this.d.senders.provider(bot.id);
    if (!provider.features.readReceipts || !provider.markRead || this.marked.has(m.providerId)) return;
    this.remember(m.providerId);
    // "typing…" once the turn ran would race the answer already on its way: then only the read mark.
    const receipt = { messageId: m.providerId, from: this.d.senders.from(bot), numberId: numberIdOf(m.raw) ?? this.d.senders.numberId(bot, undefined), typing: when === 'on-accept' };
    const sent = provider
      .markRead(receipt)
      .then((r) => {
        this.d.metrics.inc('colloquy_read_receipts_total', { outcome: r.ok ? 'ok' : 'failed' });
        if (!r.ok) this.d.logger.warn({ bot: bot.id, user: m.user, message: m.providerId, reason: r.reason }, 'could not mark the message read');
      })
      .catch((err: unknown) => {
        this.d.metrics.inc('colloquy_read_receipts_total', { outcome: 'failed' });
        this.d.logger.warn({ bot: bot.id, message: m.providerId, err: errorInfo(err) }, 'could not mark the message read');
      });
    this.d.track(sent);
  }

  private remember(id: string): void {
    if (this.marked.size >= REMEMBERED) this.marked.delete(this.marked.values().next().value as string);
    this.marked.add(id);
  }
}
