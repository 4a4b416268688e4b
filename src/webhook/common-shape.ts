/**
 * A quick check of the envelopes the provider sends nearly always (text messages, button and list
 * replies, statuses without errors) that accepts only what `envelopeSchema` accepts and yields what
 * it would: its loose objects keep every field, and what the batch reads from its result (a change's
 * `value`, its messages and statuses) are the very objects it was given. Anything else, valid or
 * not, is left to the schema, so every refusal keeps its reasons and paths. Zod's walk cost a tenth
 * of a webhook's time.
 */
import { idProblem, MAX_STATUS_LENGTH } from '../storable.js';
import type { Envelope } from './schema.js';

type Obj = Record<string, unknown>;

const PHONE = /^\+?[0-9]{5,20}$/;
const SECONDS = /^[0-9]{1,15}$/;

/** The envelope as the schema would give it, when it is of the common shapes; undefined: ask the schema. */
export function commonEnvelope(json: unknown): Envelope | undefined {
  if (!isObj(json) || json['object'] !== 'whatsapp_business_account' || !Array.isArray(json['entry'])) return undefined;
  for (const entry of json['entry'] as unknown[]) {
    if (!isObj(entry) || !idOrEmpty(entry['id']) || !Array.isArray(entry['changes'])) return undefined;
    for (const change of entry['changes'] as unknown[]) {
      if (!isObj(change) || !nonEmpty(change['field'])) return undefined;
      if (change['field'] === 'messages' && !messagesValue(change['value'])) return undefined;
      if (change['field'] === 'flows' && !isObj(change['value'])) return undefined;
    }
  }
  return json as Envelope;
}

function messagesValue(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (!optional(v['messaging_product'], isString)) return false;
  const meta = v['metadata'];
  if (!isObj(meta) || !nonEmpty(meta['display_phone_number']) || !optional(meta['phone_number_id'], idOrEmpty)) return false;
  return optional(v['contacts'], (c) => every(c, contact)) && optional(v['messages'], (m) => every(m, message)) && optional(v['statuses'], (s) => every(s, status));
}

function contact(c: unknown): boolean {
  return isObj(c) && optional(c['wa_id'], idOrEmpty);
}

function message(m: unknown): boolean {
  if (!isObj(m) || !isString(m['from']) || !PHONE.test(m['from']) || !id(m['id']) || !timestamp(m['timestamp'])) return false;
  const context = m['context'];
  if (context !== undefined && !(isObj(context) && optional(context['from'], idOrEmpty) && optional(context['id'], idOrEmpty))) return false;
  if (m['type'] === 'text') return isObj(m['text']) && isString(m['text']['body']);
  if (m['type'] === 'interactive') return reply(m['interactive']);
  return false; // other types (and a missing one) are the schema's to judge
}

function reply(i: unknown): boolean {
  if (!isObj(i)) return false;
  if (i['type'] === 'button_reply') return isObj(i['button_reply']) && id(i['button_reply']['id']) && isString(i['button_reply']['title']);
  if (i['type'] !== 'list_reply') return false;
  const r = i['list_reply'];
  return isObj(r) && id(r['id']) && isString(r['title']) && optional(r['description'], isString);
}

function status(s: unknown): boolean {
  return isObj(s) && id(s['id']) && id(s['status'], MAX_STATUS_LENGTH) && timestamp(s['timestamp']) && idOrEmpty(s['recipient_id']) && s['errors'] === undefined;
}

function timestamp(t: unknown): boolean {
  return isString(t) ? SECONDS.test(t) : Number.isSafeInteger(t) && (t as number) >= 0;
}

function every(list: unknown, item: (x: unknown) => boolean): boolean {
  if (!Array.isArray(list)) return false;
  for (const x of list) if (!item(x)) return false;
  return true;
}

function optional(v: unknown, ok: (x: unknown) => boolean): boolean {
  return v === undefined || ok(v);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isString(v: unknown): v is string {
  return typeof v === 'string';
}

/** An id the schema accepts: not empty, within `max`, no control character or unpaired surrogate. */
function id(v: unknown, max?: number): v is string {
  return nonEmpty(v) && idProblem(v, max) === undefined;
}

function idOrEmpty(v: unknown): v is string {
  return isString(v) && idProblem(v) === undefined;
}

function nonEmpty(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}
