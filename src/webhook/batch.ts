/**
 * From a parsed POST body to what the runtime commits: the inbounds (routed to their bots) and the
 * statuses. Everything is validated and routed before anything is stored, so a bad payload stores
 * nothing. The one exception is a value the database refuses though it passed validation: that item
 * alone is refused (422 `unstorable`, naming it), and the delivery's other items are stored.
 *
 * Routing is by number only: a change's `metadata.phone_number_id` when a bot is configured for it,
 * else its display number. A message to a number no bot serves refuses the whole request (422,
 * nothing stored). A status about a number no bot serves is acknowledged and dropped: it carries
 * no user turn, it cannot be about a message we sent from a number we serve, and refusing it would
 * only make the provider deliver it again and again.
 *
 * A `flows` change (WhatsApp's alerts about the Flow endpoint and flow status changes) becomes a
 * {@link FlowAlert}: logged and counted by the router, never stored (flow-alerts.ts).
 */
import type { Inbound, Runtime } from '../conversation/runtime.js';
import { formatPath, type Issue, unstorableReason } from '../errors.js';
import { errorInfo } from '../log.js';
import { WebhookError, schemaError } from './errors.js';
import { eventOf, smsEventOf } from './events.js';
import { FLOWS_FIELD, flowAlertOf, type FlowAlert } from './flow-alerts.js';
import { digitsOf, type BotNumbers } from './numbers.js';
import type { PayloadNumber } from './secrets.js';
import { commonEnvelope } from './common-shape.js';
import { envelopeSchema, smsSchema, type CloudStatus, type Envelope, type MessagesValue } from './schema.js';

/** A status as {@link Runtime.receiveStatus} takes it. */
export type StatusInput = Parameters<Runtime['receiveStatus']>[0];

/** What one POST commits. */
export interface Batch {
  readonly inbounds: readonly Inbound[];
  readonly statuses: readonly StatusInput[];
  /** Where each inbound, then each status, is in the payload: `entry[0].changes[0].value.messages[1]`. */
  readonly paths: readonly (readonly (string | number)[])[];
  /** Statuses about numbers no bot serves: acknowledged, not stored. */
  readonly ignoredStatuses: number;
  /** The numbers the payload is about (each change's metadata, an SMS's `to`), for the signature's app check. */
  readonly numbers: readonly PayloadNumber[];
  /** The `flows` changes' alerts: logged and counted once the batch is committed, never stored. */
  readonly flowAlerts: readonly FlowAlert[];
}

/** Validates a Cloud API envelope and turns it into a batch; throws WebhookError (400, 422). */
export function cloudBatch(json: unknown, numbers: BotNumbers): Batch {
  const envelope = commonEnvelope(json) ?? parsedEnvelope(json);
  const inbounds: Inbound[] = [];
  const statuses: StatusInput[] = [];
  const inboundPaths: (string | number)[][] = [];
  const statusPaths: (string | number)[][] = [];
  const about: PayloadNumber[] = [];
  const flowAlerts: FlowAlert[] = [];
  let ignoredStatuses = 0;
  envelope.entry.forEach((entry, e) => {
    entry.changes.forEach((change, c) => {
      if (change.field === FLOWS_FIELD) flowAlerts.push(flowAlertOf(change.value, entry.id));
      if (change.field !== 'messages') return; // other subscriptions are acknowledged and ignored
      const value = change.value as MessagesValue;
      const at = ['entry', e, 'changes', c, 'value'];
      const where = `entry[${e}].changes[${c}].value`;
      const { metadata } = value;
      // A number no bot serves is not ours to vouch for: its statuses are dropped, its messages refused.
      if (numbers.botIdOf(metadata) !== undefined) about.push({ phoneNumberId: metadata.phone_number_id, displayNumber: metadata.display_phone_number, path: `${where}.metadata` });
      const messages = messagesOf(value, numbers, where);
      inbounds.push(...messages);
      inboundPaths.push(...messages.map((_, m) => [...at, 'messages', m]));
      const reports = value.statuses ?? [];
      if (numbers.botIdOf(metadata) !== undefined) {
        statuses.push(...reports.map(statusOf));
        statusPaths.push(...reports.map((_, i) => [...at, 'statuses', i]));
      } else ignoredStatuses += reports.length;
    });
  });
  return { inbounds, statuses, paths: [...inboundPaths, ...statusPaths], ignoredStatuses, numbers: about, flowAlerts };
}

function parsedEnvelope(json: unknown): Envelope {
  const parsed = envelopeSchema.safeParse(json);
  if (!parsed.success) throw schemaError('webhook payload', parsed.error);
  return parsed.data;
}

function messagesOf(value: MessagesValue, numbers: BotNumbers, where: string): Inbound[] {
  const messages = value.messages ?? [];
  if (messages.length === 0) return [];
  const { metadata } = value;
  const botId = numbers.botIdOf(metadata) ?? unknownNumber(numbers, metadata.display_phone_number, `${where}.metadata.display_phone_number`);
  // The number written to goes with the message, so the runtime can answer from the phone_number_id the user last wrote to.
  const to = { ...(metadata.phone_number_id !== undefined && { phone_number_id: metadata.phone_number_id }), display_phone_number: metadata.display_phone_number };
  return messages.map((m) => ({ botId, user: digitsOf(m.from), providerId: m.id, source: 'whatsapp', event: eventOf(m), raw: { ...m, metadata: to } }));
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
  const botId = numbers.botIdFor(sms.to) ?? unknownNumber(numbers, sms.to, 'to');
  // SMS ids live in their own namespace, apart from WhatsApp ids and our own (`timer:`, `delivery:`).
  const inbound: Inbound = { botId, user: digitsOf(sms.from), providerId: `sms:${sms.id}`, source: 'sms', event: smsEventOf(sms), raw: sms };
  // Inbound SMS comes from the seed provider's relay, signed with its secret (COLLOQUY_WEBHOOK_SECRET), not a Meta app's.
  return { inbounds: [inbound], statuses: [], paths: [[]], ignoredStatuses: 0, numbers: [], flowAlerts: [] };
}

function unknownNumber(numbers: BotNumbers, number: string, field: string): never {
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

/**
 * Commits a batch: every inbound in the inbox (in order), then every status, each on its own. An
 * item the database refuses for its values is logged and skipped, and the others are stored; then
 * the request is refused, 422 `unstorable`, naming those items (a redelivery dedupes the others).
 * Any other failure stops there and is thrown.
 */
export async function commitBatch(runtime: Runtime, batch: Batch): Promise<BatchResult> {
  let duplicates = 0;
  const refused: Refused[] = [];
  const each = async (n: number, store: () => Promise<unknown>): Promise<void> => {
    try {
      await store();
    } catch (err) {
      const reason = unstorableReason(err);
      if (reason === undefined) throw err;
      const path = batch.paths[n] ?? [];
      // The reason by its code only: a driver's message may quote the value, and logs never hold the payload.
      runtime.logger.error({ path: formatPath(path), reason }, 'webhook item refused: the database cannot store a value in it');
      refused.push({ path, reason, detail: errorInfo(err).message });
    }
  };
  for (const [n, inbound] of batch.inbounds.entries()) {
    await each(n, async () => {
      if ((await runtime.receive(inbound)).duplicate) duplicates++;
    });
  }
  for (const [n, status] of batch.statuses.entries()) await each(batch.inbounds.length + n, () => runtime.receiveStatus(status));
  if (refused.length > 0) throw unstorableError(refused, batch.inbounds.length + batch.statuses.length);
  return { received: batch.inbounds.length, duplicates, statuses: batch.statuses.length, ...(batch.ignoredStatuses > 0 && { ignoredStatuses: batch.ignoredStatuses }) };
}

/** An item the database refused: where, why (by code), and the driver's own words. */
interface Refused {
  readonly path: readonly (string | number)[];
  readonly reason: string;
  readonly detail: string;
}

/**
 * The answer when items were refused: which and why. The message (which is logged) names codes
 * only; each issue adds the driver's words, for the sender of the payload.
 */
function unstorableError(refused: readonly Refused[], items: number): WebhookError {
  const which = refused.map((r) => `${formatPath(r.path)} (${r.reason})`).join('; ');
  const others = items - refused.length;
  const rest = others === 0 ? 'nothing else was in the request' : `the other ${others} ${others === 1 ? 'item was' : 'items were'} stored`;
  const issues: Issue[] = refused.map((r) => ({ path: r.path, message: `${r.reason} (${r.detail})` }));
  return new WebhookError(422, 'unstorable', `${refused.length} of ${items} items hold a value the database cannot store, refused for good (not retried): ${which}; ${rest}`, issues);
}
