/**
 * The `flows` webhook field: WhatsApp's alerts about the business's Flow endpoint and its flows,
 * turned into operations signals (one log line and one count each) instead of being dropped.
 *
 * The shapes, from Meta's "Flows Webhooks" reference
 * (https://developers.facebook.com/documentation/business-messaging/whatsapp/flows/guides/flowswebhooks,
 * with the quality system in .../flows/guides/healthmonitoring): a change
 * `{ "field": "flows", "value": { … } }` of a `whatsapp_business_account` entry (whose `id` is the
 * WABA's), where `value` is
 * - every event: `event`, `message` (a sentence for people), `flow_id`;
 * - `FLOW_STATUS_CHANGE`: `old_status`, `new_status` (DRAFT, PUBLISHED, THROTTLED, BLOCKED,
 *   DEPRECATED; an endpoint in trouble moves a flow PUBLISHED → THROTTLED → BLOCKED, and back);
 * - `ENDPOINT_ERROR_RATE`, `CLIENT_ERROR_RATE`: `error_rate`, `threshold`, `alert_state`
 *   (`ACTIVATED` when the threshold is crossed, `DEACTIVATED` when it recovers) and
 *   `errors: [{ error_type, error_rate, error_count }]`;
 * - `ENDPOINT_LATENCY`: `p50_latency`, `p90_latency`, `requests_count`, `threshold`, `alert_state`;
 * - `ENDPOINT_AVAILABILITY`: `availability`, `threshold`, `alert_state`.
 * Meta adds events and fields over time, so everything here is optional and read leniently: a
 * field of an unexpected type is left out of the line, never a reason to refuse the delivery.
 */
import { z } from 'zod';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';

/** The `field` of the changes this file reads. */
export const FLOWS_FIELD = 'flows';

/** The label of an event whose name is missing or not of Meta's shape (`[A-Z_]{1,64}`). */
export const OTHER_EVENT = 'OTHER';

const MAX_TEXT = 256;
const MAX_DETAIL = 1000;
const MAX_ERRORS = 20;
const MAX_EXTRA = 10;

const cap = (max: number) => (s: string) => (s.length > max ? `${s.slice(0, max)}…` : s);
const text = (max = MAX_TEXT) => z.string().transform(cap(max)).optional().catch(undefined);
const figure = z.number().optional().catch(undefined);
/** An id Meta sends as a string; a number is taken as its digits. */
const idText = z
  .union([z.string(), z.number().transform(String)])
  .transform(cap(MAX_TEXT))
  .optional()
  .catch(undefined);

const errorEntry = z.looseObject({ error_type: text(), error_rate: figure, error_count: figure });

/** A `flows` change's value: an object (anything else is refused), each field read leniently. */
const flowsValue = z.looseObject({
  event: text(),
  message: text(MAX_DETAIL),
  flow_id: idText,
  old_status: text(),
  new_status: text(),
  alert_state: text(),
  threshold: figure,
  error_rate: figure,
  errors: z.array(z.unknown()).optional().catch(undefined),
  p50_latency: figure,
  p90_latency: figure,
  requests_count: figure,
  availability: figure,
});

/** Validates that a `flows` change's value is an object; schema.ts checks envelopes with it. */
export const flowsChangeSchema = z.looseObject({}).superRefine((change, ctx) => {
  const v = change['value'];
  if (typeof v !== 'object' || v === null || Array.isArray(v)) ctx.addIssue({ code: 'custom', path: ['value'], message: 'must be an object: a flows notification (event, flow_id, …)' });
});

const KNOWN = new Set(Object.keys(flowsValue.shape));
/** Statuses that restrict a flow: THROTTLED caps its sends at 10 an hour, BLOCKED stops it. */
const RESTRICTED = new Set(['THROTTLED', 'BLOCKED']);

/** One alert, ready to be logged and counted. */
export interface FlowAlert {
  /** `warn` for an ACTIVATED alert or a flow now THROTTLED or BLOCKED; `info` otherwise. */
  readonly level: 'warn' | 'info';
  /** The metric label: the event's name, or {@link OTHER_EVENT}. */
  readonly label: string;
  /** The log line's message. */
  readonly summary: string;
  /** The log line's fields: Meta's names (its `message` as `detail`), present ones only. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** The metric label of an event name: itself when of Meta's shape, else {@link OTHER_EVENT}. */
export function eventLabel(event: string | undefined): string {
  return event !== undefined && /^[A-Z_]{1,64}$/.test(event) ? event : OTHER_EVENT;
}

/**
 * Reads one `flows` change's value (already checked to be an object) into an alert. `wabaId` is
 * the entry's `id`, the WhatsApp Business Account the flow belongs to.
 */
export function flowAlertOf(value: unknown, wabaId?: string): FlowAlert {
  const v = flowsValue.parse(value);
  const { message, errors, ...known } = v;
  const fields = definedOnly({
    waba_id: wabaId === '' ? undefined : wabaId,
    ...pick(known),
    detail: message,
    errors: errors === undefined ? undefined : errorsOf(errors),
    extra: extraOf(value as Record<string, unknown>),
  });
  const state = v.alert_state?.toUpperCase();
  const restricted = v.new_status !== undefined && RESTRICTED.has(v.new_status.toUpperCase());
  return { level: state === 'ACTIVATED' || restricted ? 'warn' : 'info', label: eventLabel(v.event), summary: summaryOf(v), fields };
}

/** Logs each alert at its level and counts it in `colloquy_flow_alerts_total{event}`. */
export function reportFlowAlerts(alerts: readonly FlowAlert[], logger: Logger, metrics: Metrics): void {
  for (const a of alerts) {
    logger[a.level]({ field: FLOWS_FIELD, ...a.fields }, a.summary);
    metrics.inc('colloquy_flow_alerts_total', { event: a.label });
  }
}

type Parsed = z.infer<typeof flowsValue>;

function summaryOf(v: Parsed): string {
  const flow = v.flow_id === undefined ? '' : ` (flow ${v.flow_id})`;
  if (v.event === 'FLOW_STATUS_CHANGE' || (v.event === undefined && v.new_status !== undefined)) {
    return `WhatsApp flow status changed: ${v.old_status ?? '?'} → ${v.new_status ?? '?'}${flow}`;
  }
  return `WhatsApp flow alert: ${v.event ?? 'unnamed event'}${v.alert_state === undefined ? '' : ` ${v.alert_state}`}${flow}`;
}

/** The known fields, minus the parser's extras (a loose object keeps unknown keys; they go to `extra`). */
function pick(known: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(known).filter(([k]) => KNOWN.has(k)));
}

function errorsOf(list: readonly unknown[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const item of list.slice(0, MAX_ERRORS)) {
    const e = errorEntry.safeParse(item);
    if (e.success) out.push(definedOnly({ error_type: e.data.error_type, error_rate: e.data.error_rate, error_count: e.data.error_count }));
  }
  return out;
}

/** Fields Meta may add later, when they are plain values: a few, bounded, so a line stays a line. */
function extraOf(raw: Record<string, unknown>): Record<string, unknown> | undefined {
  const extra: Record<string, unknown> = {};
  let n = 0;
  for (const [k, value] of Object.entries(raw)) {
    if (KNOWN.has(k) || n >= MAX_EXTRA) continue;
    const kept = typeof value === 'string' ? cap(MAX_TEXT)(value) : typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
    if (kept === undefined) continue;
    extra[cap(64)(k)] = kept;
    n++;
  }
  return n === 0 ? undefined : extra;
}

function definedOnly(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
