/** The words the terminal chat and the web simulator share for a handoff. */
import { describe, expect, it } from 'vitest';
import { agentByline, handoffHistory, handoffNow, timeLeft } from '../../src/simulator/handoff-words.js';
import type { HandoffRecord } from '../../src/store/handoff-types.js';

const T = 1_767_268_800_000;
const base: HandoffRecord = {
  id: 7,
  conversationId: 3,
  botId: 'support',
  user: '15551230001',
  state: 'waiting',
  reason: null,
  queue: null,
  agent: null,
  note: null,
  endedBy: null,
  timeoutAt: T + 600_000,
  startedAt: T,
  claimedAt: null,
  endedAt: null,
  claimIdleUntil: null,
};

describe('handoff words', () => {
  it('counts down in whole minutes, then seconds', () => {
    expect([600_000, 570_001, 60_000, 59_001, 1, 0, -5].map(timeLeft)).toEqual(['10m', '10m', '1m', '1m', '1s', '0s', '0s']);
    expect(timeLeft(3_720_000)).toBe('1h 2m');
  });

  it('says where the handoff is now', () => {
    expect(handoffNow(base, T + 30_000)).toBe('a person takes over this chat: waiting for an agent; it times out in 10m');
    expect(handoffNow({ ...base, timeoutAt: null, queue: 'vip' }, T)).toBe('a person takes over this chat (queue vip): waiting for an agent');
    expect(handoffNow({ ...base, state: 'claimed', agent: 'ana', claimedAt: T }, T)).toBe('ana has this chat');
  });

  it('tells a handoff’s history, however it ended', () => {
    const released = { ...base, state: 'ended' as const, agent: 'ana', endedBy: 'ana', claimedAt: T + 1, endedAt: T + 2 };
    expect(handoffHistory(released)).toEqual([
      { moment: 'started', at: T, text: 'a person takes over this chat' },
      { moment: 'claimed', at: T + 1, text: 'ana has this chat' },
      { moment: 'ended', at: T + 2, text: 'ana handed the chat back to the bot' },
    ]);
    expect(handoffHistory({ ...base, state: 'timeout', endedBy: 'timeout', endedAt: T + 600_000 }).map((m) => m.text)).toEqual([
      'a person takes over this chat',
      'no agent claimed the chat in time: the bot has it back',
    ]);
    expect(handoffHistory({ ...base, state: 'closed', endedBy: 'system', endedAt: T + 5 }).at(-1)).toEqual({ moment: 'closed', at: T + 5, text: 'the handoff closed with the conversation' });
    expect(handoffHistory(base)).toHaveLength(1);
  });

  it('names the agent above the agent’s messages', () => {
    expect([agentByline('ana', false), agentByline('ana', true)]).toEqual(['ana (agent)', 'ana (agent, by SMS)']);
  });
});
