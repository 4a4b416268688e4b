/** What a bot answers to input its current state does not handle. */
import type { Message } from '../messages/message.js';
import type { ConversationRecord } from '../store/types.js';
import type { ActorHandle } from './actor.js';
import type { Bot } from './bot.js';

/** The messages to send for unhandled input, by the bot's policy (default: re-send the prompt). */
export function unhandledReply(bot: Bot, conv: ConversationRecord | undefined, handle: ActorHandle, event: { type: string }): readonly Message[] | undefined {
  const policy = bot.options.onUnhandled ?? 'reprompt';
  if (policy === 'ignore') return undefined;
  if (policy === 'reprompt') return (conv?.lastPrompt as Message[] | null) ?? undefined;
  const out = policy({ event, state: handle.state, context: handle.snapshot.context });
  if (out === undefined) return undefined;
  return Array.isArray(out) ? out : [out as Message];
}
