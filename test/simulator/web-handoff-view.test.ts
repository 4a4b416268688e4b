/**
 * The web simulator's view of a handoff (the JSON the page gets), on the harness's clock: the
 * banner while a person takes over or has the chat, with the time left before it times out; the
 * chat's system lines where a person takes over, an agent claims it and the bot has it back (by
 * release or timeout); and agents' messages under the agent's name, by SMS or not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import support from '../../bots/support.js';
import { buttons } from '../../src/messages/builders.js';
import { createTestBot, type TestConversation } from '../../src/simulator/harness.js';
import { botInfos } from '../../src/simulator/web/bots.js';
import type { ChatItem } from '../../src/simulator/web/timeline.js';
import { buildView, type View } from '../../src/simulator/web/view.js';

let conv: TestConversation | undefined;

afterEach(async () => {
  await conv?.close();
  conv = undefined;
});

async function view(c: TestConversation): Promise<View> {
  return buildView(c.store, c.sandbox, botInfos([support], '15550000000')[0]!, c.user, c.clock.now());
}

/** The chat as lines: `user: …`, `bot: …`, `ana (agent): …`, `-- a system line`. */
function lines(timeline: readonly ChatItem[]): string[] {
  return timeline.map((i) => {
    if (i.kind === 'note') return `-- ${i.text}`;
    if (i.kind === 'user') return `user: ${i.text}`;
    const r = i.request as { message?: string; listMessages?: { body: string }; replyButtons?: { body: string } };
    return `${i.byline ?? 'bot'}: ${r.message ?? r.listMessages?.body ?? r.replyButtons?.body}`;
  });
}

async function toHandoff(c: TestConversation, topic: string, problem: string): Promise<void> {
  await c.tap(topic);
  await c.tap('agent');
  await c.type(problem);
}

describe('the web simulator’s view of a handoff', () => {
  it('shows who has the chat, agents by name, and the bot back after a release', async () => {
    conv = await createTestBot(support);
    await conv.type('hi');
    await toHandoff(conv, 'wifi', 'The router blinks red');
    const handedOver = await view(conv);
    const since = conv.clock.now();
    expect(handedOver.handoff).toEqual({
      id: conv.handoff!.id,
      state: 'waiting',
      queue: 'wifi',
      agent: null,
      startedAt: since,
      claimedAt: null,
      timeoutAt: since + 600_000,
      text: 'a person takes over this chat (queue wifi): waiting for an agent; it times out in 10m',
    });
    expect(handedOver.timeline.at(-1)).toEqual({ kind: 'note', at: since, text: 'a person takes over this chat (queue wifi)', handoff: 'started' });

    await conv.advance('5m30s');
    expect((await view(conv)).handoff?.text).toBe('a person takes over this chat (queue wifi): waiting for an agent; it times out in 5m');
    await conv.advance('4m15s');
    expect((await view(conv)).handoff?.text).toBe('a person takes over this chat (queue wifi): waiting for an agent; it times out in 15s');

    await conv.type('hello?');
    // In one millisecond: the claim, then the agent's messages (by SMS, as text goes on the seed provider, and buttons on WhatsApp).
    const ana = conv.agent('ana');
    await ana.claim();
    await ana.reply('Hi, Ana here. Let me check your line.');
    await ana.reply(buttons({ body: 'Is the light green now?', buttons: [{ id: 'green', title: 'Yes, green' }] }));
    const claimed = await view(conv);
    expect(claimed.handoff).toMatchObject({ state: 'claimed', agent: 'ana', claimedAt: conv.clock.now(), timeoutAt: null, text: 'ana has this chat' });
    const agents = claimed.timeline.filter((i) => i.kind === 'bot' && i.agent !== undefined);
    expect(agents.map((i) => i.kind === 'bot' && [i.agent, i.channel, i.byline])).toEqual([
      ['ana', 'sms', 'ana (agent, by SMS)'],
      ['ana', 'interactive', 'ana (agent)'],
    ]);
    expect(claimed.timeline.filter((i) => i.kind === 'bot' && i.agent === undefined).every((i) => i.kind === 'bot' && !('byline' in i))).toBe(true);

    await conv.advance('1s');
    await ana.release('line reset');
    const back = await view(conv);
    expect(back.handoff).toBeNull();
    expect(lines(back.timeline).slice(-9)).toEqual([
      'user: The router blinks red',
      expect.stringMatching(/^bot: Thanks\. Ticket T-\S+ is open; a person will take over this chat in a moment\.$/),
      '-- a person takes over this chat (queue wifi)',
      'user: hello?',
      '-- ana has this chat',
      'ana (agent, by SMS): Hi, Ana here. Let me check your line.',
      'ana (agent): Is the light green now?',
      '-- ana handed the chat back to the bot',
      'bot: You are back with the assistant. Is there anything else we can help with?',
    ]);
    expect(back.timeline.filter((i) => i.kind === 'note' && i.handoff !== undefined).map((i) => i.kind === 'note' && i.handoff)).toEqual(['started', 'claimed', 'ended']);
  });

  it('says when no agent claimed it in time, instead of the timer’s own line', async () => {
    conv = await createTestBot(support);
    await conv.type('hi');
    await toHandoff(conv, 'billing', 'I was charged twice');
    await conv.advance('10m');
    const v = await view(conv);
    expect(v.handoff).toBeNull();
    expect(lines(v.timeline).slice(-6)).toEqual([
      expect.stringMatching(/^bot: Thanks\. Ticket/),
      '-- a person takes over this chat (queue billing)',
      '-- no agent claimed the chat in time: the bot has it back',
      expect.stringMatching(/^bot: Sorry, all our agents are busy\./),
      expect.stringMatching(/^bot: Help desk: ticket/),
      '-- conversation done',
    ]);
    expect(v.timeline.some((i) => i.kind === 'note' && i.text.includes('timer fired'))).toBe(false);
    expect(v.conversation?.status).toBe('done');
  });

  it('marks each handoff of a conversation in its place', async () => {
    conv = await createTestBot(support);
    await conv.type('hi');
    await toHandoff(conv, 'wifi', 'No signal');
    await conv.agent('bo').claim();
    await conv.agent('bo').release();
    await conv.tap('more');
    await toHandoff(conv, 'setup', 'The TV box will not start');
    const v = await view(conv);
    expect(v.handoff).toMatchObject({ state: 'waiting', queue: 'setup' });
    expect(lines(v.timeline).filter((l) => l.startsWith('-- ') || l.startsWith('user: '))).toEqual([
      'user: hi',
      'user: Wi-Fi problems',
      'user: No, talk to a person',
      'user: No signal',
      '-- a person takes over this chat (queue wifi)',
      '-- bo has this chat',
      '-- bo handed the chat back to the bot',
      'user: Yes, something else',
      'user: Setting up a device',
      'user: No, talk to a person',
      'user: The TV box will not start',
      '-- a person takes over this chat (queue setup)',
    ]);
  });
});
