/**
 * From a parsed POST body to what the runtime commits: the inbounds (routed to their bots) and the
 * statuses. Everything is validated and routed before anything is stored, so a bad payload stores
 * nothing.
 *
 * Routing is by number only. A message to a number no bot serves refuses the whole request (422,
 * nothing stored). A status about a number no bot serves is acknowledged and dropped: it carries
 * no user turn, it cannot be about a message we sent from a number we serve, and refusing it would
 * only make the provider deliver it again and again.
 */
import type { Inbound, Runtime } from '../conversation/runtime.js';
import { WebhookError, schemaError } from './errors.js';
import { eventOf, smsEventOf } from './events.js';
import { digitsOf, type BotNumbers } from './numbers.js';
import { commonEnvelope } from './common-shape.js';
import { envelopeSchema, smsSchema, type CloudStatus, type Envelope, type MessagesValue } from './schema.js';

/** A status as {@link Runtime.receiveStatus} takes it. */
export type StatusInput = Parameters<Runtime['receiveStatus']>[0];

/** What one POST commits. */
export interface Batch {
  readonly inbounds: readonly Inbound[];
  readonly statuses: readonly StatusInput[];
  /** Statuses about numbers no bot serves: acknowledged, not stored. */
  readonly ignoredStatuses: number;
}

/** Validates a Cloud API envelope and turns it into a batch; throws WebhookError (400, 422). */
export function cloudBatch(json: unknown, numbers: BotNumbers): Batch {
  const envelope = commonEnvelope(json) ?? parsedEnvelope(json);
  const inbounds: Inbound[] = [];
  const statuses: StatusInput[] = [];
  let ignoredStatuses = 0;
  envelope.entry.forEach((entry, e) => {
    entry.changes.forEach((change, c) => {
      if (change.field !== 'messages') return; // other subscriptions are acknowledged and ignored
      const value = change.value as MessagesValue;
      inbounds.push(...messagesOf(value, numbers, `entry[${e}].changes[${c}].value`));
      const about = value.statuses ?? [];
      if (numbers.serves(value.metadata.display_phone_number)) statuses.push(...about.map(statusOf));
      else ignoredStatuses += about.length;
    });
  });
  return { inbounds, statuses, ignoredStatuses };
}

function parsedEnvelope(json: unknown): Envelope {
  const parsed = envelopeSchema.safeParse(json);
  if (!parsed.success) throw schemaError('webhook payload', parsed.error);
  return parsed.data;
}

function messagesOf(value: MessagesValue, numbers: BotNumbers, where: string): Inbound[] {
  const messages = value.messages ?? [];
  if (messages.length === 0) return [];
  const botId = routeTo(numbers, value.metadata.display_phone_number, `${where}.metadata.display_phone_number`);
  return messages.map((m) => ({ botId, user: digitsOf(m.from), providerId: m.id, source: 'whatsapp', event: eventOf(m), raw: m }));
}

/** The Cloud API's timestamp is in seconds; the store keeps milliseconds, like every other time. */
function statusOf(s: CloudStatus): StatusInput {
  return {
    providerMessageId: s.id,
    status: s.status,
    timestamp: Number(s.timestamp) * 1000,
    recipient: s.recipient_id,
    errors: s.errors,
    raw: s,
  };
}

/** Validates an inbound SMS and turns it into a batch; throws WebhookError (400, 422). */
export function smsBatch(json: unknown, numbers: BotNumbers): Batch {
  const parsed = smsSchema.safeParse(json);
  if (!parsed.success) throw schemaError('inbound SMS', parsed.error);
  const sms = parsed.data;
  const botId = routeTo(numbers, sms.to, 'to');
  // SMS ids live in their own namespace, apart from WhatsApp ids and our own (`timer:`, `delivery:`).
  const inbound: Inbound = { botId, user: digitsOf(sms.from), providerId: `sms:${sms.id}`, source: 'sms', event: smsEventOf(sms), raw: sms };
  return { inbounds: [inbound], statuses: [], ignoredStatuses: 0 };
}

function routeTo(numbers: BotNumbers, number: string, field: string): string {
  const botId = numbers.botIdFor(number);
  if (botId !== undefined) return botId;
  throw new WebhookError(422, 'unknown_number', `No bot serves the number ${digitsOf(number)} (${field}); served: ${numbers.numbers.join(', ')}`);
}

/** What committing a batch did. */
export interface BatchResult {
  /** Inbound messages in the request, duplicates included. */
  readonly received: number;
  /** Of those, how many were already in the inbox (a redelivery). */
  readonly duplicates: number;
  readonly statuses: number;
  /** Statuses acknowledged but not stored (about a number no bot serves); absent when none. */
  readonly ignoredStatuses?: number;
}

/** Commits a batch: every inbound in the inbox (in order), then every status. */
export async function commitBatch(runtime: Runtime, batch: Batch): Promise<BatchResult> {
  let duplicates = 0;
  for (const inbound of batch.inbounds) {
    if ((await runtime.receive(inbound)).duplicate) duplicates++;
  }
  for (const status of batch.statuses) await runtime.receiveStatus(status);
  return { received: batch.inbounds.length, duplicates, statuses: batch.statuses.length, ...(batch.ignoredStatuses > 0 && { ignoredStatuses: batch.ignoredStatuses }) };
}
