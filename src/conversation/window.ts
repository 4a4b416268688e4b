/**
 * The 24-hour customer-service window (providers that keep it: the Cloud API). WhatsApp delivers a
 * free-form message only within 24 hours of the user's last message; after that only a template.
 * The runtime checks the window when a message is about to be sent (not when it was queued), and
 * when the provider refuses with 131047 (in its answer or later in a `failed` status), and then
 * does what the bot's window policy says: send a template instead, tell the machine
 * (`send.failed`, reason `window`), or send the message by SMS.
 */
import type { Message, TemplateMessage } from '../messages/message.js';
import type { FailureFollowUp, NewInbound, OutboxRecord, UserMessageFact } from '../store/types.js';
import { deliveryRaw } from '../store/inbound-facts.js';
import type { Bot, WindowAction } from './bot.js';
import type { SendFailedEvent } from './events.js';
import { statePaths } from './state-paths.js';

/** How long the window stays open after the user's last message. */
export const WINDOW_MS = 24 * 60 * 60 * 1000;

/** The provider code of a message refused outside the window. */
export const WINDOW_CODE = 131047;

/** Whether the window is open at `now`, given the user's last WhatsApp message. */
export function windowOpen(last: UserMessageFact | undefined, now: number): boolean {
  return last !== undefined && now - last.at < WINDOW_MS;
}

/**
 * The bot's action for a state: the state's own entry, else its nearest parent's, else `closed`;
 * `'event'` when the bot declares no policy.
 */
export function windowAction(bot: Bot, state: string | null | undefined): WindowAction {
  const policy = bot.options.window;
  if (policy === undefined) return 'event';
  const states = policy.states ?? {};
  for (const path of statePaths(state)) {
    const parts = path.split('.');
    for (let n = parts.length; n > 0; n--) {
      const hit = states[parts.slice(0, n).join('.')];
      if (hit !== undefined) return hit;
    }
  }
  return policy.closed;
}

/** The template an action names, for this message. */
export function templateOf(action: Extract<WindowAction, object>, info: { bot: Bot; row: OutboxRecord; state: string; last: UserMessageFact | undefined }): TemplateMessage {
  const t = action.template;
  return typeof t === 'function' ? t({ botId: info.bot.id, user: info.row.user, state: info.state, message: info.row.message as Message, lastUserMessageAt: info.last?.at }) : t;
}

/** `send.failed` (reason `window`) for the bot, as the inbound recorded with the row's failure. */
export function windowEvent(row: OutboxRecord, now: number, last: UserMessageFact | undefined, code: string | number | undefined): FailureFollowUp {
  const event: SendFailedEvent = {
    type: 'send.failed',
    reason: 'window',
    messageId: row.fallbackOf ?? row.id,
    kind: row.kind,
    ...(code !== undefined && { code }),
    ...(last !== undefined && { lastUserMessageAt: last.at }),
  };
  const inbound: NewInbound = {
    // The same namespace as delivery.failed: one follow-up per failed row, however often it is planned.
    providerId: `delivery:${row.id}`,
    botId: row.botId,
    user: row.user,
    source: 'delivery',
    receivedAt: now,
    event: { ...event },
    raw: deliveryRaw({ conversationId: row.conversationId, outboxId: row.id }),
  };
  return { inbound };
}

/** Why a row was not sent, for its `error` column. */
export function windowError(last: UserMessageFact | undefined, refused: boolean): string {
  const since = last === undefined ? 'the user has not written on WhatsApp' : `the user last wrote at ${new Date(last.at).toISOString()}`;
  return refused ? `the provider refused it outside the 24-hour window (${since})` : `not sent: the 24-hour window is closed (${since})`;
}
