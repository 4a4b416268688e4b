/**
 * The customer's view of a handoff from the handoff log, on the harness's clock: a claim, the
 * claim going back to the queue when its agent does nothing for the claim idle time (or is
 * removed), another agent's claim after it, the release and the timeout each get a line; the
 * user's messages during the handoff say they went to the person; internal notes (and a
 * release's note) never reach the customer's view. A handoff older than the log still shows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import support from '../../bots/support.js';
import { createTestBot, type TestConversation } from '../../src/simulator/harness.js';
import { botInfos } from '../../src/simulator/web/bots.js';
import type { ChatItem } from '../../src/simulator/web/timeline.js';
import { buildView, type View } from '../../src/simulator/web/view.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';

const IDLE_MS = 5 * 60_000;
let conv: TestConversation | undefined;

afterEach(async () => {
  await conv?.close();
  conv = undefined;
});

async function view(c: TestConversation): Promise<View> {
  return buildView(c.store, c.sandbox, botInfos([support], '15550000000')[0]!, c.user, c.clock.now());
}

/** The chat from the handoff on: `user: … [where it went]`, `bot: …`, `ana (agent): …`, `-- a system line`. */
function lines(timeline: readonly ChatItem[]): string[] {
  const from = timeline.findIndex((i) => i.kind === 'note' && i.handoff === 'started');
  return timeline.slice(from).map((i) => {
    if (i.kind === 'note') return `-- ${i.text}`;
    if (i.kind === 'user') return `user: ${i.text}${i.toPerson === undefined ? '' : ` [${i.toPerson}]`}`;
    const r = i.request as { message?: string; listMessages?: { body: string }; replyButtons?: { body: string } };
    return `${i.byline ?? 'bot'}: ${r.message ?? r.listMessages?.body ?? r.replyButtons?.body}`;
  });
}

async function toHandoff(c: TestConversation): Promise<number> {
  await c.type('hi');
  await c.tap('wifi');
  await c.tap('agent');
  await c.type('The router blinks red');
  return c.conversation!.id;
}

describe('the customer’s view of a handoff, from the handoff log', () => {
  it('marks a claim, its going back to the queue, another agent’s claim and the release, and never a note', async () => {
    conv = await createTestBot(support, { handoffClaimIdleMs: IDLE_MS });
    const id = await toHandoff(conv);
    // A second between the moments: within one millisecond, the chat cannot tell a user's message from a moment after it.
    await conv.advance('1s');
    await conv.type('hello?');
    await conv.advance('1s');
    await conv.agent('ana').claim();
    await conv.agent('ana').reply('Hi, Ana here.');
    const noted = await conv.store.addHandoffNote(id, { name: 'ana', via: 'open' }, 'NOTE-7731 customer sounds angry', conv.clock.now());
    expect(noted.ok).toBe(true);
    await conv.advance('1s');
    await conv.type('are you there?');

    await conv.advance('4m');
    expect((await view(conv)).handoff).toMatchObject({ state: 'claimed', agent: 'ana' });
    await conv.advance('2m'); // five minutes after ana's last act (the note): her claim goes back
    const back = await view(conv);
    expect(back.handoff).toMatchObject({ state: 'waiting', agent: null });
    // The handoff's own timeout is armed again from when the claim went back (the harness returns it when the clock stops).
    expect(back.handoff?.text).toMatch(/^the chat is back in the queue \(queue wifi\): waiting for an agent; it times out in (9|10)m$/);
    expect(back.timeline.at(-1)).toMatchObject({ kind: 'note', handoff: 'requeued', text: 'ana did not answer in time: the chat is back in the queue' });

    await conv.advance('1s');
    await conv.type('anyone?');
    await conv.advance('1s');
    await conv.agent('bo').claim();
    await conv.agent('bo').reply('Bo here, sorry for the wait.');
    await conv.advance('1s');
    await conv.agent('bo').release('RELEASE-4410 line reset, refund queued');
    await conv.type('thanks');
    const v = await view(conv);
    expect(v.handoff).toBeNull();
    expect(lines(v.timeline)).toEqual([
      '-- a person takes over this chat (queue wifi)',
      'user: hello? [went to the person who takes over this chat]',
      '-- ana has this chat',
      'ana (agent, by SMS): Hi, Ana here.',
      'user: are you there? [went to ana, who has this chat]',
      '-- ana did not answer in time: the chat is back in the queue',
      'user: anyone? [went to the person who takes over this chat]',
      '-- bo has this chat',
      'bo (agent, by SMS): Bo here, sorry for the wait.',
      '-- bo handed the chat back to the bot',
      'bot: You are back with the assistant. Is there anything else we can help with?',
      'user: thanks',
      expect.stringMatching(/^bot: /),
    ]);
    expect(v.timeline.filter((i) => i.kind === 'note' && i.handoff).map((i) => i.kind === 'note' && i.handoff)).toEqual(['started', 'claimed', 'requeued', 'claimed', 'ended']);
    // What agents write to each other is theirs: not in the JSON the customer's page gets.
    const json = JSON.stringify(v);
    expect(json).not.toContain('NOTE-7731');
    expect(json).not.toContain('RELEASE-4410');
    expect((await conv.store.handoffLog(id)).map((e) => e.text)).toContain('NOTE-7731 customer sounds angry'); // it was written, only not shown
  });

  it('says when a removed agent’s claim went back, then that nobody claimed it in time', async () => {
    conv = await createTestBot(support);
    await toHandoff(conv);
    expect(await conv.store.addAgent('cy', 'a'.repeat(64), conv.clock.now())).toBe(true);
    await conv.agent('cy').claim();
    await conv.advance('1m');
    const removed = await conv.store.removeAgent('cy', { now: conv.clock.now(), notify: false });
    expect(removed).toMatchObject({ removed: true, claims: 1 });
    const v = await view(conv);
    expect(v.handoff).toMatchObject({ state: 'waiting', text: 'the chat is back in the queue (queue wifi): waiting for an agent; it times out in 10m' });
    expect(v.timeline.at(-1)).toMatchObject({ kind: 'note', handoff: 'requeued', text: 'cy is no longer available: the chat is back in the queue' });

    await conv.advance('10m');
    const end = lines((await view(conv)).timeline);
    expect(end.filter((l) => l.startsWith('-- '))).toEqual([
      '-- a person takes over this chat (queue wifi)',
      '-- cy has this chat',
      '-- cy is no longer available: the chat is back in the queue',
      '-- no agent claimed the chat in time: the bot has it back',
      '-- conversation done',
    ]);
  });

  it('shows a handoff older than the handoff log from its record', async () => {
    conv = await createTestBot(support);
    const id = await toHandoff(conv);
    await conv.agent('ana').claim();
    await conv.agent('ana').release();
    (conv.store as SqliteStore).db.exec('DELETE FROM handoff_log'); // as a database the log's migration found
    expect(await conv.store.handoffLog(id)).toEqual([]);
    const notes = (await view(conv)).timeline.flatMap((i) => (i.kind === 'note' && i.handoff ? [i.text] : []));
    expect(notes).toEqual(['a person takes over this chat (queue wifi)', 'ana has this chat', 'ana handed the chat back to the bot']);
  });
});
