/**
 * From a message to the provider's request bodies: the messaging endpoint's envelope (seed §2.1)
 * and the SMS body (provider.md §1.3). Also reads a seed-shaped message from JSON.
 */
import { MessageValidationError, type Issue } from '../errors.js';
import { FLOW_TOKEN_PLACEHOLDER } from './builders.js';
import type { InteractiveMessage, Message } from './message.js';
import { InteractiveRequestSchema, SmsRequestSchema, type InteractiveRequest, type SmsRequest } from './schema.js';
import { check, parseOrThrow } from './validate.js';

/** Who a request goes from and to, and the conversation's flow token. */
export interface Addressing {
  readonly from: string;
  readonly to: string;
  /** Replaces the placeholder token of a flow message. */
  readonly flowToken?: string | undefined;
}

/** The messaging endpoint's body for an interactive message, validated. */
export function toInteractiveRequest(m: InteractiveMessage, a: Addressing): InteractiveRequest {
  let req: InteractiveRequest;
  const missing: Issue[] = [];
  if (m.kind === 'list') req = { from: a.from, to: a.to, type: 'contacts', listMessages: m.listMessages };
  else if (m.kind === 'buttons') req = { from: a.from, to: a.to, type: 'interactive', replyButtons: m.replyButtons };
  else {
    const p = m.flow.action.parameters;
    let token = p.flow_token;
    if (token === FLOW_TOKEN_PLACEHOLDER) {
      if (a.flowToken === undefined) missing.push({ path: ['flow', 'action', 'parameters', 'flow_token'], message: 'no flow token: pass one, or send the flow from a conversation' });
      else token = a.flowToken;
    }
    req = { from: a.from, to: a.to, type: 'interactive', flow: { ...m.flow, action: { ...m.flow.action, parameters: { ...p, flow_token: token } } } };
  }
  const r = check(InteractiveRequestSchema, req);
  if (!r.ok || missing.length > 0) throw new MessageValidationError([...missing, ...(r.ok ? [] : r.issues)]);
  return r.value;
}

/** SMS body options (provider.md §1.3). */
export interface SmsAddressing {
  readonly to: string;
  readonly tag?: string | undefined;
  readonly country?: string | undefined;
  readonly dial?: number | undefined;
  readonly mask?: string | undefined;
}

/** The SMS endpoint's body, validated. */
export function toSmsRequest(text: string, a: SmsAddressing): SmsRequest {
  const req: SmsRequest = {
    msisdns: [a.to],
    message: text,
    ...(a.tag !== undefined && { tag: a.tag }),
    ...(a.country !== undefined && { country: a.country }),
    ...(a.dial !== undefined && { dial: a.dial }),
    ...(a.mask !== undefined && { mask: a.mask }),
  };
  return parseOrThrow(SmsRequestSchema, req);
}

/**
 * Reads a message as the seed shows it: `{type, listMessages | replyButtons | flow}`, optionally a
 * whole envelope with `from` and `to`. Returns the message and the envelope's numbers if given.
 */
export function fromSeedJson(json: unknown): { message: InteractiveMessage; from?: string; to?: string } {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new MessageValidationError([{ path: [], message: 'must be a JSON object with "type" and one of listMessages, replyButtons, flow' }]);
  }
  const o = json as Record<string, unknown>;
  const placeholder = '000000';
  const req = parseOrThrow(InteractiveRequestSchema, { from: placeholder, to: placeholder, ...o });
  const message: InteractiveMessage = req.listMessages
    ? { kind: 'list', listMessages: req.listMessages }
    : req.replyButtons
      ? { kind: 'buttons', replyButtons: req.replyButtons }
      : { kind: 'flow', flow: req.flow! };
  return {
    message,
    ...(typeof o['from'] === 'string' && { from: o['from'] }),
    ...(typeof o['to'] === 'string' && { to: o['to'] }),
  };
}

/** A message's variant, for logs and diagrams: `list`, `buttons`, `buttons(image)` (its header), `flow`, `text`, `sms`. */
export function variantOf(m: Message): string {
  if (m.kind === 'buttons') {
    const h = m.replyButtons.headerImage ? 'image' : m.replyButtons.headerVideo ? 'video' : m.replyButtons.headerDocument ? 'document' : undefined;
    return h === undefined ? 'buttons' : `buttons(${h})`;
  }
  return m.kind;
}
