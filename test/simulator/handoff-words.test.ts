/** The words the terminal chat and the web simulator share for a handoff. */
import { describe, expect, it } from 'vitest';
import { agentByline, handoffHistory, handoffNow, heldText, requeuedText, timeLeft } from '../../src/simulator/handoff-words.js';
import type { HandoffLogEntry } from '../../src/store/agent-types.js';
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
    // Waiting again with who last held it: the claim went back to the queue.
    expect(handoffNow({ ...base, agent: 'ana', claimedAt: T, queue: 'vip' }, T)).toBe('the chat is back in the queue (queue vip): waiting for an agent; it times out in 10m');
  });

  it('tells a handoff’s history, however it ended', () => {
    const released = { ...base, state: 'ended' as const, agent: 'ana', endedBy: 'ana', claimedAt: T + 1, endedAt: T + 2 };
    expect(handoffHistory(released)).toEqual([
      { moment: 'started', at: T, text: 'a person takes over this chat', agent: null },
      { moment: 'claimed', at: T + 1, text: 'ana has this chat', agent: 'ana' },
      { moment: 'ended', at: T + 2, text: 'ana handed the chat back to the bot', agent: 'ana' },
    ]);
    expect(handoffHistory({ ...base, state: 'timeout', endedBy: 'timeout', endedAt: T + 600_000 }).map((m) => m.text)).toEqual([
      'a person takes over this chat',
      'no agent claimed the chat in time: the bot has it back',
    ]);
    expect(handoffHistory({ ...base, state: 'closed', endedBy: 'system', endedAt: T + 5 }).at(-1)).toEqual({
      moment: 'closed',
      at: T + 5,
      text: 'the handoff closed with the conversation',
      agent: null,
    });
    expect(handoffHistory(base)).toHaveLength(1);
  });

  it('tells every moment from the handoff log, and never an internal note nor a release’s note', () => {
    let id = 0;
    const entry = (action: HandoffLogEntry['action'], at: number, agent: string | null, text: string | null = null, handoffId = 7): HandoffLogEntry => ({
      id: ++id,
      handoffId,
      conversationId: 3,
      action,
      agent,
      via: agent === null ? null : 'open',
      text,
      outboxId: null,
      at,
    });
    const log = [
      entry('claim', T + 1, 'ana'),
      entry('message', T + 2, 'ana'),
      entry('note', T + 3, 'ana', 'customer sounds angry'),
      entry('claim_expired', T + 4, 'ana', 'idle'),
      entry('claim', T + 5, 'bo'),
      entry('claim_expired', T + 6, 'bo', 'agent_removed'),
      entry('claim', T + 7, 'cy'),
      entry('release', T + 8, 'cy', 'refund queued'),
      entry('claim', T + 9, 'zed', null, 8), // another handoff's
    ];
    const h = { ...base, state: 'ended' as const, agent: 'cy', endedBy: 'cy', claimedAt: T + 7, endedAt: T + 8 };
    const marks = handoffHistory(h, log);
    expect(marks.map((m) => [m.moment, m.at, m.text])).toEqual([
      ['started', T, 'a person takes over this chat'],
      ['claimed', T + 1, 'ana has this chat'],
      ['requeued', T + 4, 'ana did not answer in time: the chat is back in the queue'],
      ['claimed', T + 5, 'bo has this chat'],
      ['requeued', T + 6, 'bo is no longer available: the chat is back in the queue'],
      ['claimed', T + 7, 'cy has this chat'],
      ['ended', T + 8, 'cy handed the chat back to the bot'],
    ]);
    expect(JSON.stringify(marks)).not.toMatch(/angry|refund/);
    // Timed out after a claim went back; the system's end has no agent.
    const timedOut = handoffHistory({ ...base, state: 'timeout', agent: 'ana', endedBy: 'timeout', endedAt: T + 9 }, [log[0]!, log[3]!, entry('timeout', T + 9, null)]);
    expect(timedOut.map((m) => m.moment)).toEqual(['started', 'claimed', 'requeued', 'timeout']);
    // A handoff whose end predates the log (only its claim is logged) still ends.
    expect(handoffHistory(h, [log[6]!]).map((m) => m.moment)).toEqual(['started', 'claimed', 'ended']);
  });

  it('says where the user’s messages went during a handoff, and why a claim went back', () => {
    expect([heldText(null), heldText('ana')]).toEqual(['went to the person who takes over this chat', 'went to ana, who has this chat']);
    expect([requeuedText('ana', 'idle'), requeuedText(null, 'agent_removed')]).toEqual([
      'ana did not answer in time: the chat is back in the queue',
      'the agent is no longer available: the chat is back in the queue',
    ]);
  });

  it('names the agent above the agent’s messages', () => {
    expect([agentByline('ana', false), agentByline('ana', true)]).toEqual(['ana (agent)', 'ana (agent, by SMS)']);
  });
});
