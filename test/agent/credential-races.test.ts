/**
 * An agent rotated or removed between its token's lookup and the write that follows: a sign-in
 * racing `colloquy agents rotate` opens no session (the insert requires the token hash it checked),
 * and a claim racing `colloquy agents remove` does not leave the removed agent holding the
 * conversation. Real SQLite store; each race is forced by a store wrapper that changes the agent
 * right after the token lookup.
 */
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { newAgentToken, secretHash } from '../../src/agent/auth.js';
import { createAgentRouter } from '../../src/agent/router.js';
import type { RunningServer } from '../../src/server.js';
import type { AgentStore } from '../../src/store/agent-types.js';
import { serve, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function start(): Promise<{ s: RunningServer; token: string }> {
  const { server: s } = await serve();
  cleanup.push(() => s.close());
  const token = newAgentToken();
  expect(await s.store.addAgent('ana', secretHash(token), Date.now())).toBe(true);
  return { s, token };
}

/** The server's store, except that `change` (colloquy agents rotate / remove) lands just after the first token lookup. */
function changingAfterLookup(store: AgentStore, change: (s: AgentStore) => Promise<unknown>): AgentStore {
  let changed = false;
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'agentByTokenHash') {
        return async (hash: string) => {
          const found = await target.agentByTokenHash(hash);
          if (found && !changed) {
            changed = true;
            await change(target);
          }
          return found;
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

describe('an agent rotated or removed between its token lookup and the write', () => {
  it('the session made from the replaced token does not work', async () => {
    const { s, token } = await start();
    const app = express().use(
      createAgentRouter({
        desk: s.runtime.handoffs,
        store: changingAfterLookup(s.store, async (t) => expect(await t.setAgentToken('ana', secretHash(newAgentToken()))).toBe(true)),
        serviceToken: 'service-token-0123456789',
      }),
    );
    const res = await request(app).post('/agent/session').send({ token });
    if (res.status === 401) return; // refused: the right answer too
    const cookie = (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    // The token this session came from was replaced: the session must be dead like every other of ana's.
    expect((await request(app).get('/agent/me').set('cookie', cookie)).status).toBe(401);
  });

  it('a claim whose agent was removed while it was being authenticated does not stay claimed by the removed agent', async () => {
    // Removal promises that the agent's claims end at once; a claim landing just after it must
    // be refused (the store's claim can require the agent to exist for via token/session).
    const { s, token } = await start();
    const id = await walkToHandoff(s);
    const store = changingAfterLookup(s.store, (t) => t.removeAgent('ana', { now: Date.now(), notify: false }));
    const app = express().use(createAgentRouter({ desk: s.runtime.handoffs, store, serviceToken: 'service-token-0123456789' }));
    await request(app).post(`/agent/handoffs/${id}/claim`).set('authorization', `Bearer ${token}`).send({});
    const h = (await s.store.openHandoff(id))!;
    expect([h.state, h.agent]).not.toEqual(['claimed', 'ana']);
  });
});
