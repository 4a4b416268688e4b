/**
 * `Idempotency-Key` on an agent's message, as payment APIs define it, on both stores: the same key
 * with the same body from the same agent is the same message, even after the handoff was released;
 * the same key with another body (422), or from another agent (409), is refused and names the key.
 * Nothing is dropped silently.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { api, serve, USER, user, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

const STORES = [
  { name: 'sqlite', db: async () => ':memory:' },
  { name: 'postgres', db: () => freshDatabaseUrl() },
] as const;

describe.each(STORES)('Idempotency-Key on $name', ({ db }) => {
  async function claimed(): Promise<{ s: RunningServer; id: number; send: (body: unknown, agent: string, key: string) => ReturnType<typeof api> }> {
    const { server: s } = await serve({ db: await db() });
    cleanup.push(() => s.close());
    const id = await walkToHandoff(s);
    expect((await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' })).status).toBe(200);
    const send = (body: unknown, agent: string, key: string) => api(s, 'POST', `/agent/handoffs/${id}/messages`, body, { 'x-agent': agent, 'idempotency-key': key });
    return { s, id, send };
  }

  const agentTexts = async (s: RunningServer, id: number) =>
    (await api(s, 'GET', `/agent/conversations/${id}`)).json.transcript.filter((l: { from: string }) => l.from === 'agent').map((l: { text: string }) => l.text);

  it('the same key with the same body is the same message; with another body it is refused (422) naming the key', async () => {
    const { s, id, send } = await claimed();
    const first = await send({ text: 'Refund on its way.' }, 'ana', 'k-1');
    expect(first).toMatchObject({ status: 202, json: { duplicate: false } });
    // The same body, written another way (key order, the agent in the body instead of the header).
    const again = await api(s, 'POST', `/agent/handoffs/${id}/messages`, { text: 'Refund on its way.', agent: 'ana' }, { 'idempotency-key': 'k-1' });
    expect(again).toMatchObject({ status: 200, json: { duplicate: true, outboxId: first.json.outboxId } });

    const other = await send({ text: 'Something else entirely.' }, 'ana', 'k-1');
    expect(other.status).toBe(422);
    expect(other.json.error).toMatchObject({ code: 'idempotency_key_reused', field: 'Idempotency-Key' });
    expect(other.json.error.message).toContain('"k-1"');
    expect(other.json.error.message).toMatch(/another body/);

    const list = await send({ message: { kind: 'text', text: 'Refund on its way.' } }, 'ana', 'k-1');
    expect(list.status).toBe(422);

    // A fresh key sends the new text.
    expect((await send({ text: 'Something else entirely.' }, 'ana', 'k-2')).status).toBe(202);
    await s.runtime.idle();
    expect(await agentTexts(s, id)).toEqual(['Refund on its way.', 'Something else entirely.']);
  });

  it('an agent who does not hold the handoff gets 409 naming the key, not the holder’s message as a duplicate', async () => {
    const { s, id, send } = await claimed();
    const first = await send({ text: 'Hello from Ana.' }, 'ana', 'shared-key');
    expect(first.status).toBe(202);
    const bob = await send({ text: 'Hello from Ana.' }, 'bob', 'shared-key');
    expect(bob.status).toBe(409);
    expect(bob.json.error.message).toContain('"shared-key"');
    expect(bob.json.error.message).toMatch(/another agent/);
    expect(bob.json).not.toHaveProperty('outboxId');
    const bobOther = await send({ text: 'Bob here.' }, 'bob', 'shared-key');
    expect(bobOther.status).toBe(409);
    const bobNew = await send({ text: 'Bob here.' }, 'bob', 'bob-key');
    expect(bobNew.status).toBe(409);
    expect(bobNew.json.error.message).toContain('agent "ana" holds it');
    await s.runtime.idle();
    expect(await agentTexts(s, id)).toEqual(['Hello from Ana.']);
  });

  it('a retry after the handoff was released is the first message (200 duplicate); another agent with the key is refused', async () => {
    const { s, id, send } = await claimed();
    const first = await send({ text: 'Refund on its way.' }, 'ana', 'k-lost');
    expect(first.status).toBe(202); // …and the answer is lost on the way
    expect((await api(s, 'POST', `/agent/handoffs/${id}/release`, { agent: 'ana' })).status).toBe(200);
    const retry = await send({ text: 'Refund on its way.' }, 'ana', 'k-lost');
    expect(retry).toMatchObject({ status: 200, json: { duplicate: true, outboxId: first.json.outboxId } });
    const bob = await send({ text: 'Refund on its way.' }, 'bob', 'k-lost');
    expect(bob.status).toBe(409);
    expect(bob.json.error.message).toContain('"k-lost"');
    expect(bob.json.error.message).not.toMatch(/nothing was queued/);
    expect(bob.json).not.toHaveProperty('outboxId');
    const other = await send({ text: 'Something else.' }, 'ana', 'k-lost');
    expect(other).toMatchObject({ status: 422, json: { error: { code: 'idempotency_key_reused' } } });
    const fresh = await send({ text: 'Something else.' }, 'ana', 'k-new');
    expect(fresh.status).toBe(409); // no open handoff, and nothing under this key
    await s.runtime.idle();
    expect(await agentTexts(s, id)).toEqual(['Refund on its way.']);
  });

  it('a retry after the conversation ended is still the first message; a new message there is refused', async () => {
    const { s, id, send } = await claimed();
    const first = await send({ text: 'All sorted.' }, 'ana', 'k-end');
    expect(first.status).toBe(202);
    expect((await api(s, 'POST', `/agent/handoffs/${id}/release`, { agent: 'ana' })).status).toBe(200);
    await s.runtime.idle();
    await user(s, { type: 'reply.done', id: 'done', title: 'No, thank you', via: 'button' });
    expect((await s.store.conversation(id))?.status).not.toBe('active');
    expect(await send({ text: 'All sorted.' }, 'ana', 'k-end')).toMatchObject({ status: 200, json: { duplicate: true, outboxId: first.json.outboxId } });
    const fresh = await send({ text: 'One more thing.' }, 'ana', 'k-late');
    expect(fresh.status).toBe(409);
    expect(fresh.json.error.message).toMatch(/has ended/);
    expect((await send({ text: 'All sorted.' }, 'bob', 'k-end')).status).toBe(409);
  });

  it('the key is per conversation: the same key on another conversation is a new message', async () => {
    const { s, send } = await claimed();
    expect((await send({ text: 'one' }, 'ana', 'same')).status).toBe(202);
    const otherUser = '5215512340002';
    const id2 = await walkToHandoff(s, otherUser);
    expect((await api(s, 'POST', `/agent/handoffs/${id2}/claim`, { agent: 'ana' })).status).toBe(200);
    const r = await api(s, 'POST', `/agent/handoffs/${id2}/messages`, { text: 'one' }, { 'x-agent': 'ana', 'idempotency-key': 'same' });
    expect(r).toMatchObject({ status: 202, json: { duplicate: false } });
    expect(USER).not.toBe(otherUser);
  });
});
