/**
 * A new `GET /agent/stream` gets the last queue built, and the streams already open get nothing
 * for it: they hear of real changes only.
 */
import { afterEach, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { serve, TOKEN, walkToHandoff } from './helpers.js';
import { openStream } from './stream.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

it('opening more streams sends nothing to the streams already open', async () => {
  const { server: s } = await serve();
  cleanup.push(() => s.close());
  const bearer = { authorization: `Bearer ${TOKEN}` };
  const first = await openStream(s, bearer);
  cleanup.push(() => first.close());
  await eventually(() => expect(first.events).toHaveLength(1));
  for (let i = 0; i < 5; i++) {
    const more = await openStream(s, bearer);
    cleanup.push(() => more.close());
    await eventually(() => expect(more.events).toHaveLength(1));
  }
  // A real change, written to `first` after anything sent to it before.
  const id = await walkToHandoff(s);
  await eventually(() => expect(first.events.some((e) => e.data.handoffs.some((h: { conversationId: number }) => h.conversationId === id))).toBe(true));
  const before = first.events.filter((e) => e.data.handoffs.length === 0);
  expect(before).toHaveLength(1); // the queue it opened with, and no copy per stream opened since
});
