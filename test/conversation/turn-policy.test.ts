/** The turn's policy, without a store: every decision and every reason, from plain records. */
import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { channelOf, decideTurn, factsToRead, firedEvent, isStaleFlow, SKIP_MESSAGES, type TurnFacts, type TurnInputs } from '../../src/conversation/turn-policy.js';
import { defineBot } from '../../src/index.js';
import { HANDOFF_TIMER_KEY } from '../../src/store/handoff-types.js';
import type { ConversationRecord, HandoffRecord } from '../../src/store/types.js';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const machine = () => createMachine({ id: 'shop', initial: 'menu', states: { menu: {} } });
const newest = defineBot({ id: 'shop', version: 2, machine: machine(), options: { expireAfterMs: 10 * HOUR } });
const older = defineBot({ id: 'shop', version: 1, machine: machine(), options: { expireAfterMs: HOUR } });

function conversation(over: Partial<ConversationRecord> = {}): ConversationRecord {
  return {
    id: 7,
    botId: 'shop',
    user: '5215512345678',
    status: 'active',
    snapshot: null,
    state: 'menu',
    version: 3,
    botVersion: 1,
    flowToken: 'ft_current',
    channel: 'interactive',
    lastPrompt: null,
    createdAt: T0,
    updatedAt: T0,
    lastActivityAt: T0,
    endedAt: null,
    ...over,
  };
}

function handoff(over: Partial<HandoffRecord> = {}): HandoffRecord {
  return {
    id: 4,
    conversationId: 7,
    botId: 'shop',
    user: '5215512345678',
    state: 'waiting',
    reason: null,
    queue: null,
    agent: null,
    note: null,
    endedBy: null,
    timeoutAt: T0 + 500,
    claimIdleUntil: null,
    startedAt: T0,
    claimedAt: null,
    endedAt: null,
    ...over,
  };
}

type Inbound = TurnInputs['inbound'];
const text: Inbound = { source: 'whatsapp', event: { type: 'text', text: 'hi' } };
const smsText: Inbound = { source: 'sms', event: { type: 'text', text: '2' } };
const apiText: Inbound = { source: 'api', event: { type: 'text', text: 'hi' } };
const apiNudge: Inbound = { source: 'api', event: { type: 'nudge' } };
const timer = (key: string, conversationId = 7, fireAt = T0 + 500): Inbound => ({ source: 'timer', event: { type: `xstate.after.${key}` }, timer: { key, fireAt, conversationId } });
const delivery = (conversationId = 7): Inbound => ({ source: 'delivery', event: { type: 'delivery.failed', channel: 'interactive', reason: 'x' }, delivery: { conversationId, outboxId: 1 } });
const released = (conversationId = 7): Inbound => ({ source: 'internal', event: { type: 'handoff.ended', by: 'ana' }, release: { conversationId, handoffId: 4 } });

/** Inputs for an inbound: by default the user's active conversation (on version 1) exists, just active. */
function inputs(inbound: Inbound, over: Partial<TurnFacts> = {}): TurnFacts {
  return { inbound, newest, conversation: conversation(), chosen: older, now: T0 + 1, ...over };
}

describe('factsToRead', () => {
  it('reads nothing without an active conversation', () => {
    for (const i of [text, timer('a'), delivery(), released(), apiNudge]) expect(factsToRead(inputs(i, { conversation: undefined, chosen: undefined }))).toBeUndefined();
  });

  it("reads the handoff as of a user's message, and no timers", () => {
    expect(factsToRead(inputs(text))).toEqual({ conversationId: 7, handoff: 'as-of-inbound', timers: false });
    expect(factsToRead(inputs(apiText))).toEqual({ conversationId: 7, handoff: 'as-of-inbound', timers: false });
  });

  it("reads nothing for a user's message that expires its conversation", () => {
    expect(factsToRead(inputs(text, { now: T0 + HOUR }))).toBeUndefined();
  });

  it("reads a timer's conversation's timers, and the open handoff for a handoff's timeout", () => {
    expect(factsToRead(inputs(timer('a')))).toEqual({ conversationId: 7, timers: true });
    expect(factsToRead(inputs(timer(HANDOFF_TIMER_KEY)))).toEqual({ conversationId: 7, timers: true, handoff: 'open' });
  });

  it('reads nothing for a timer of another conversation, a delivery report, a release or an event from your backend', () => {
    expect(factsToRead(inputs(timer('a', 6)))).toBeUndefined();
    expect(factsToRead(inputs(delivery()))).toBeUndefined();
    expect(factsToRead(inputs(released()))).toBeUndefined();
    expect(factsToRead(inputs(apiNudge))).toBeUndefined();
  });
});

describe('decideTurn: the user’s messages', () => {
  it('starts a new conversation on the newest version when there is none', () => {
    expect(decideTurn(inputs(text, { conversation: undefined, chosen: undefined }))).toEqual({
      kind: 'run',
      bot: newest,
      conversation: undefined,
      expire: undefined,
      userActivity: true,
      channel: 'interactive',
      timerKey: undefined,
      handoffTimeout: undefined,
    });
  });

  it('continues the active conversation on the version chosen for it', () => {
    const conv = conversation();
    expect(decideTurn(inputs(smsText, { conversation: conv }))).toMatchObject({ kind: 'run', bot: older, conversation: conv, userActivity: true, channel: 'sms' });
  });

  it('tries the newest version when no served version fits the conversation', () => {
    const conv = conversation();
    expect(decideTurn(inputs(text, { conversation: conv, chosen: undefined }))).toMatchObject({ kind: 'run', bot: newest, conversation: conv });
  });

  it("expires a conversation idle for its own version's expiry (not the newest's) and starts a new one", () => {
    expect(decideTurn(inputs(text, { now: T0 + HOUR - 1 }))).toMatchObject({ kind: 'run', bot: older, expire: undefined });
    expect(decideTurn(inputs(text, { now: T0 + HOUR }))).toMatchObject({ kind: 'run', bot: newest, conversation: undefined, expire: 7, userActivity: true });
  });

  it('holds a message for the agents during a handoff, with the channel it came by', () => {
    const open = handoff({ state: 'claimed', agent: 'ana' });
    expect(decideTurn(inputs(smsText, { handoff: open }))).toEqual({ kind: 'hold', bot: older, handoff: open, channel: 'sms' });
    expect(decideTurn(inputs(apiText, { handoff: open }))).toEqual({ kind: 'hold', bot: older, handoff: open, channel: undefined });
  });

  it('does not hold a message that expired its conversation: the new conversation has no handoff', () => {
    expect(decideTurn(inputs(text, { now: T0 + HOUR, handoff: handoff() }))).toMatchObject({ kind: 'run', expire: 7, conversation: undefined });
  });

  it('lets your backend start a conversation with an event of its own', () => {
    expect(decideTurn(inputs(apiNudge, { conversation: undefined, chosen: undefined }))).toMatchObject({ kind: 'run', bot: newest, conversation: undefined, userActivity: false, channel: undefined });
  });
});

describe('decideTurn: timers, reports and releases', () => {
  it('skips them when their conversation has ended', () => {
    for (const i of [timer('a'), delivery(), released()]) {
      expect(decideTurn(inputs(i, { conversation: undefined, chosen: undefined }))).toEqual({ kind: 'skip', reason: 'conversation-ended' });
    }
  });

  it('skips them when the active conversation is a newer one than theirs', () => {
    for (const i of [timer('a', 6), delivery(6), released(6)]) expect(decideTurn(inputs(i))).toEqual({ kind: 'skip', reason: 'conversation-ended' });
  });

  it('runs a report or release of the active conversation, never as user activity, never expiring it', () => {
    const conv = conversation();
    for (const i of [delivery(), released()]) {
      expect(decideTurn(inputs(i, { conversation: conv, now: T0 + 100 * HOUR }))).toEqual({
        kind: 'run',
        bot: older,
        conversation: conv,
        expire: undefined,
        userActivity: false,
        channel: undefined,
        timerKey: undefined,
        handoffTimeout: undefined,
      });
    }
  });

  it('runs one of our own events that carries no facts in the active conversation', () => {
    const bare: Inbound = { source: 'internal', event: { type: 'handoff.ended' } };
    expect(decideTurn(inputs(bare))).toMatchObject({ kind: 'run', conversation: { id: 7 } });
    expect(decideTurn(inputs(bare, { conversation: undefined, chosen: undefined }))).toEqual({ kind: 'skip', reason: 'conversation-ended' });
  });

  it('runs a timer that is no longer pending, with its key', () => {
    expect(decideTurn(inputs(timer('a'), { timerKeys: ['b'] }))).toMatchObject({ kind: 'run', bot: older, timerKey: 'a', userActivity: false, handoffTimeout: undefined });
  });

  it('skips a timer whose state was entered again after it fired (the timer is pending again)', () => {
    expect(decideTurn(inputs(timer('a'), { timerKeys: ['b', 'a'] }))).toEqual({ kind: 'skip', reason: 'state-reentered' });
    expect(decideTurn(inputs(timer(HANDOFF_TIMER_KEY), { timerKeys: [HANDOFF_TIMER_KEY], handoff: handoff() }))).toEqual({ kind: 'skip', reason: 'state-reentered' });
  });

  it("runs a handoff's timeout while its handoff still waits with that timeout, and settles it", () => {
    const open = handoff();
    expect(decideTurn(inputs(timer(HANDOFF_TIMER_KEY), { timerKeys: [], handoff: open }))).toMatchObject({ kind: 'run', timerKey: HANDOFF_TIMER_KEY, handoffTimeout: open });
  });

  it("skips a handoff's timeout once the handoff was claimed, ended, or opened again with another timeout", () => {
    const settled = { kind: 'skip', reason: 'handoff-settled' };
    expect(decideTurn(inputs(timer(HANDOFF_TIMER_KEY), { timerKeys: [] }))).toEqual(settled);
    expect(decideTurn(inputs(timer(HANDOFF_TIMER_KEY), { timerKeys: [], handoff: handoff({ state: 'claimed', agent: 'ana' }) }))).toEqual(settled);
    expect(decideTurn(inputs(timer(HANDOFF_TIMER_KEY), { timerKeys: [], handoff: handoff({ timeoutAt: T0 + 900 }) }))).toEqual(settled);
  });

  it('never holds a timer for the agents, even during a handoff', () => {
    expect(decideTurn(inputs(timer('a'), { timerKeys: [], handoff: handoff() }))).toMatchObject({ kind: 'run', timerKey: 'a', handoffTimeout: undefined });
  });
});

describe('the reasons and the helpers', () => {
  it('keeps each skipped inbound with the text it has always had', () => {
    expect(SKIP_MESSAGES).toEqual({
      'conversation-ended': 'its conversation has ended',
      'state-reentered': 'its state was entered again after it fired',
      'handoff-settled': 'its handoff was claimed or ended before it timed out',
      'flow-completed': 'its flow was completed at the Flow endpoint, whose submit ran the turn',
    });
  });

  it('moves the conversation to the channel the user wrote on, and only then', () => {
    expect([channelOf('whatsapp'), channelOf('sms'), channelOf('api'), channelOf('timer'), channelOf('delivery'), channelOf('internal')]).toEqual([
      'interactive',
      'sms',
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("renames a fired delay after a migration renamed its state, and nothing else's event", () => {
    const rename = (id: string) => (id === 'shop.menu' ? 'shop.start' : id);
    expect(firedEvent({ source: 'timer', event: { type: 'xstate.after.1000.shop.menu' } }, rename)).toEqual({ type: 'xstate.after.1000.shop.start' });
    expect(firedEvent({ source: 'timer', event: { type: 'xstate.after.1000.shop.menu' } }, undefined)).toEqual({ type: 'xstate.after.1000.shop.menu' });
    const user = { source: 'api' as const, event: { type: 'xstate.after.1000.shop.menu' } };
    expect(firedEvent(user, rename)).toBe(user.event);
  });

  it("treats a flow answer with another token than the conversation's as stale", () => {
    const conv = conversation();
    expect(isStaleFlow({ type: 'flow', token: 'ft_old', data: {} }, conv, 'ft_current')).toBe(true);
    expect(isStaleFlow({ type: 'flow', token: 'ft_current', data: {} }, conv, 'ft_current')).toBe(false);
    expect(isStaleFlow({ type: 'flow', token: 'ft_old', data: {} }, undefined, 'ft_new')).toBe(false);
    expect(isStaleFlow({ type: 'text', text: 'hi' }, conv, 'ft_current')).toBe(false);
  });
});
