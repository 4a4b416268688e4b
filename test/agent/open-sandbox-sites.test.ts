/**
 * The sandbox's open agents' API (no COLLOQUY_AGENT_TOKEN: a request from loopback names its agent)
 * and the other sites a developer's browser has open: a "simple" cross-site POST (no-cors fetch,
 * `Content-Type: text/plain`, no preflight) and a page that reached loopback by DNS rebinding are
 * refused; the same-origin console still works.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { serve, USER, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function sandboxWithoutToken(): Promise<RunningServer> {
  const { server } = await serve({ token: null });
  cleanup.push(() => server.close());
  return server;
}

/** What a page on https://evil.example makes Chromium send with fetch(…, { mode: 'no-cors' }). */
const crossSite = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'content-type': 'text/plain;charset=UTF-8' };

describe("the sandbox's open agents' API and other sites", () => {
  it('refuses a cross-site claim and message; the user gets nothing', async () => {
    const s = await sandboxWithoutToken();
    const id = await walkToHandoff(s);
    const before = s.sandbox!.messages.filter((m) => m.to === USER).length;

    const claim = await request(s.url).post(`/agent/handoffs/${id}/claim`).set(crossSite).send('{"agent":"mallory"}');
    expect(claim.status).toBe(403);
    expect((await s.store.openHandoff(id))!.state).toBe('waiting');

    // Even with the handoff claimed by someone, a cross-site page must not write as them.
    await request(s.url).post(`/agent/handoffs/${id}/claim`).send({ agent: 'ana' }).expect(200);
    const msg = await request(s.url).post(`/agent/handoffs/${id}/messages`).set(crossSite).send('{"agent":"ana","text":"Please confirm your card number here: https://evil.example"}');
    expect(msg.status).toBe(403);
    await s.runtime.idle();
    expect(s.sandbox!.messages.filter((m) => m.to === USER)).toHaveLength(before);
  });

  it('refuses a page that reached loopback by DNS rebinding (a Host that is not this machine)', async () => {
    // A page on rebind.evil.example whose name now resolves to 127.0.0.1 is same-origin with
    // itself: it reads the answers. Only the Host header tells it apart from the local console.
    const s = await sandboxWithoutToken();
    const id = await walkToHandoff(s);
    const port = new URL(s.url).port;
    const read = await request(s.url)
      .get(`/agent/conversations/${id}`)
      .set({ host: `rebind.evil.example:${port}`, 'x-agent': 'mallory' });
    expect(read.status).not.toBe(200);
    expect(JSON.stringify(read.body)).not.toContain('I was charged twice');
    const queue = await request(s.url)
      .get('/agent/handoffs')
      .set({ host: `rebind.evil.example:${port}` });
    expect(queue.status).not.toBe(200);
  });

  it('the same-origin console (Sec-Fetch-Site: same-origin, JSON) still works', async () => {
    const s = await sandboxWithoutToken();
    const id = await walkToHandoff(s);
    await request(s.url).post(`/agent/handoffs/${id}/claim`).set({ origin: s.url, 'sec-fetch-site': 'same-origin' }).send({ agent: 'ana' }).expect(200);
  });
});
