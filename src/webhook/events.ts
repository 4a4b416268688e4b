/**
 * From a validated provider message to the event a bot's machine receives (architecture.md §2):
 * text → `text`, a tapped button or list row → `reply.<id>`, a tapped quick-reply button of a
 * template → `reply.<payload>` (via `template`), a completed flow → `flow`, anything else →
 * `unsupported`.
 */
import { replyEvent } from '../conversation/events.js';
import type { Inbound } from '../conversation/runtime.js';
import type { ButtonMessage, CloudMessage, InboundSmsBody, InteractiveMessage, TextMessage } from './schema.js';
import { parseResponseJson } from './schema.js';

/** A runtime event, as the inbox stores it. */
export type InboundEvent = Inbound['event'];

/** The event of a Cloud API message that passed {@link messageSchema}. */
export function eventOf(message: CloudMessage): InboundEvent {
  if (message.type === 'text') return { type: 'text', text: (message as TextMessage).text.body, via: 'whatsapp' };
  if (message.type === 'interactive') return interactiveEvent(message as InteractiveMessage);
  if (message.type === 'button') {
    const { payload, text } = (message as ButtonMessage).button;
    return { ...replyEvent(payload, text ?? payload, 'template') };
  }
  return unsupported(message.type);
}

function interactiveEvent(message: InteractiveMessage): InboundEvent {
  const i = message.interactive as Record<string, unknown> & { type: string };
  switch (i.type) {
    case 'button_reply': {
      const r = i['button_reply'] as { id: string; title: string };
      return { ...replyEvent(r.id, r.title, 'button') };
    }
    case 'list_reply': {
      const r = i['list_reply'] as { id: string; title: string };
      return { ...replyEvent(r.id, r.title, 'list') };
    }
    case 'nfm_reply':
      return flowEvent((i['nfm_reply'] as { response_json: string }).response_json);
    default:
      return unsupported(`interactive.${i.type}`);
  }
}

function flowEvent(responseJson: string): InboundEvent {
  const answer = parseResponseJson(responseJson);
  // The schema has checked response_json already; this guards a caller that skipped it.
  if (typeof answer === 'string') throw new TypeError(answer);
  return { type: 'flow', token: answer.token, data: answer.data };
}

function unsupported(messageType: string): InboundEvent {
  return { type: 'unsupported', messageType };
}

/** The event of an inbound SMS: its text (the runtime maps a typed number to a reply). */
export function smsEventOf(sms: InboundSmsBody): InboundEvent {
  return { type: 'text', text: sms.text, via: 'sms' };
}
