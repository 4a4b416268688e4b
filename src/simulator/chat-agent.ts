/**
 * The terminal chat's side of a handoff: a line each time the conversation's handoff changes (a
 * person takes over, an agent claims it, the bot has it back), agents' messages under their names,
 * and `/agent claim | reply <text> | release [note]` to play the agent, as the harness's `agent()`.
 */
import type { HandoffRecord } from '../store/handoff-types.js';
import type { TestConversation } from './harness.js';
import { agentByline, BOT_BACK, handoffNow, heldText, requeuedText, timeLeft } from './handoff-words.js';
import { BOT_PREFIX, SMS_PREFIX } from './render.js';

/** The agent the chat plays. */
export const CHAT_AGENT = 'agent';

/** What `/agent` takes. */
export const AGENT_USAGE = '/agent claim | /agent reply <text> | /agent release [note]';

/** A line for a handoff that changed since `shown` (undefined when it did not). */
export function handoffLine(shown: HandoffRecord | undefined, now: HandoffRecord | undefined, at: number): string | undefined {
  if (now === undefined) return shown?.state === 'waiting' || shown?.state === 'claimed' ? `(${BOT_BACK})` : undefined;
  if (shown?.id === now.id && shown.state === now.state) return undefined;
  // The same handoff waiting again after a claim: its agent did nothing for the claim's idle time.
  if (now.state === 'waiting' && shown?.id === now.id && shown.state === 'claimed') {
    const left = now.timeoutAt === null ? '' : `; it times out in ${timeLeft(now.timeoutAt - at)}`;
    // The terminal chat's agents are never removed: a claim it sees go back was idle.
    return `(${requeuedText(now.agent, 'idle')}, waiting for an agent${left})`;
  }
  const how = now.state === 'waiting' ? '; /agent claim plays the agent' : now.state === 'claimed' ? ': what you write goes to them' : '';
  return `(${handoffNow(now, at)}${how})`;
}

/** A message the chat prints: an agent's under the agent's name (and "by SMS" when it went so), the bot's as the bot's. */
export function byWhom(rendered: string, agent: string | undefined): string {
  if (agent === undefined) return rendered;
  for (const [prefix, bySms] of [
    [BOT_PREFIX, false],
    [SMS_PREFIX, true],
  ] as const) {
    if (rendered.startsWith(prefix)) return `${agentByline(agent, bySms)} › ${rendered.slice(prefix.length)}`;
  }
  return `${agentByline(agent, false)}:\n${rendered}`;
}

/** What the chat says when the user's message went to the person of `h` (open) instead of the bot. */
export function heldLine(h: HandoffRecord): string {
  return `(your message ${heldText(h.state === 'claimed' ? h.agent : null)})`;
}

/** Runs `/agent …` on the conversation; throws a usage error for anything else. */
export async function agentCommand(conv: TestConversation, rest: string): Promise<void> {
  const [, verb = '', arg = ''] = /^(\S*)\s*(.*)$/s.exec(rest.trim()) ?? [];
  const agent = conv.agent(CHAT_AGENT);
  if (verb === 'claim') return agent.claim();
  if (verb === 'reply' && arg.trim() !== '') return agent.reply(arg.trim());
  if (verb === 'release') return agent.release(arg.trim() === '' ? undefined : arg.trim());
  throw new Error(AGENT_USAGE);
}
