/**
 * A handoff in the terminal chat: a line when a person takes over, the agent's messages under the
 * agent's name, the user's messages going to the person instead of "(no answer)", and
 * `/agent claim | reply | release` playing the agent until the bot has the chat back.
 */
import { expect, it } from 'vitest';
import { ChatSession } from '../../src/simulator/chat.js';
import support from '../../bots/support.js';

it('shows the handoff and plays the agent: claim, reply under the agent’s name, release back to the bot', async () => {
  let all = '';
  let mark = 0;
  const since = () => {
    const fresh = all.slice(mark);
    mark = all.length;
    return fresh;
  };
  const s = await ChatSession.start({ bot: support, out: (t) => (all += t) });
  try {
    await s.handle('hi');
    await s.handle('1');
    await s.handle('No, talk to a person');
    since();
    await s.handle('The router blinks red');
    const handedOver = since();
    expect(handedOver).toContain('(a person takes over this chat (queue wifi): waiting for an agent; it times out in 10m; /agent claim plays the agent)\n');
    await s.handle('hello?');
    expect(since().trim()).toBe('(your message went to the person who takes over this chat)');
    await s.handle('/agent claim');
    expect(since().trim()).toBe('(agent has this chat: what you write goes to them)');
    await s.handle('are you there?');
    expect(since().trim()).toBe('(your message went to agent, who has this chat)');
    await s.handle('/agent reply Let me check your line.');
    expect(since().trim()).toBe('agent (agent, by SMS) › Let me check your line.'); // the user answered the list by number, as by SMS
    await s.handle('/agent release fixed the line');
    const back = since();
    expect(back).toContain('(the bot has this chat back)');
    expect(back).toMatch(/^bot › /m);
    await s.handle('/agent frobnicate');
    expect(since()).toContain('/agent claim | /agent reply <text> | /agent release [note]');
  } finally {
    await s.close();
  }
});

it('says when a claim went back to the queue because the agent did nothing for the claim idle time', async () => {
  let all = '';
  const s = await ChatSession.start({ bot: support, out: (t) => (all += t), harness: { handoffClaimIdleMs: 5 * 60_000 } });
  try {
    for (const line of ['hi', '1', 'No, talk to a person', 'The router blinks red', '/agent claim']) await s.handle(line);
    const mark = all.length;
    await s.handle('/wait 4m');
    expect(all.slice(mark)).not.toContain('back in the queue');
    await s.handle('/wait 2m');
    // The claim went back at its deadline, 5 minutes after it was taken: the 10-minute timeout counts from then.
    expect(all.slice(mark)).toContain('(agent did not answer in time: the chat is back in the queue, waiting for an agent; it times out in 9m)');
  } finally {
    await s.close();
  }
});
