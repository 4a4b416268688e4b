/**
 * The rules of the sandbox's open agents' API (no COLLOQUY_AGENT_TOKEN), one by one: a loopback
 * `Host` (localhost, 127.x, [::1]), a request from this server's own pages or from a local script
 * (`Sec-Fetch-Site` same-origin or none, an `Origin` with this host, or neither), and writes whose
 * body is JSON; each refusal says why.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { loopbackHost } from '../../src/agent/loopback.js';
import type { RunningServer } from '../../src/server.js';
import { serve, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function sandbox(): Promise<{ s: RunningServer; id: number; port: string }> {
  const { server: s } = await serve({ token: null });
  cleanup.push(() => s.close());
  return { s, id: await walkToHandoff(s), port: new URL(s.url).port };
}

const state = async (s: RunningServer, id: number) => (await s.store.openHandoff(id))!.state;

describe("the sandbox's open agents' API", () => {
  it('answers at localhost, 127.0.0.1 and [::1], and refuses any other host, naming it', async () => {
    const { s, port } = await sandbox();
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
      expect([host, (await request(s.url).get('/agent/handoffs').set('host', host)).status]).toEqual([host, 200]);
    }
    const r = await request(s.url).get('/agent/handoffs').set('host', `localhost.evil.example:${port}`);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ code: 'forbidden', message: expect.stringContaining(`"localhost.evil.example:${port}"`) });
  });

  it('refuses another site by its Origin or Sec-Fetch-Site, and takes its own pages and local scripts', async () => {
    const { s, id } = await sandbox();
    const claim = (headers: Record<string, string>) => request(s.url).post(`/agent/handoffs/${id}/claim`).set(headers).send({ agent: 'ana' });
    // An older browser without Sec-Fetch-Site still sends Origin on a POST.
    const foreign = await claim({ origin: 'http://localhost:5173' });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.message).toContain('http://localhost:5173');
    // Another port on this machine is the same site, but not the same origin.
    expect((await claim({ 'sec-fetch-site': 'same-site' })).status).toBe(403);
    expect(await state(s, id)).toBe('waiting');
    // A page under `Referrer-Policy: no-referrer` (the simulator's console) sends Origin "null" on its own writes.
    expect((await claim({ origin: 'null', 'sec-fetch-site': 'same-origin' })).status).toBe(200);
    expect(await state(s, id)).toBe('claimed');
    // A local script sends neither.
    expect((await request(s.url).post(`/agent/handoffs/${id}/release`).send({ agent: 'ana' })).status).toBe(200);
    expect((await request(s.url).get('/agent/handoffs').set({ origin: s.url, 'sec-fetch-site': 'none' })).status).toBe(200);
  });

  it('takes a write only with a JSON body (415 for anything else) or with no body at all', async () => {
    const { s, id } = await sandbox();
    const plain = await request(s.url).post(`/agent/handoffs/${id}/claim`).set('content-type', 'text/plain').send('{"agent":"ana"}');
    expect(plain.status).toBe(415);
    expect(plain.body.error).toMatchObject({ code: 'unsupported', message: expect.stringContaining('application/json') });
    const form = await request(s.url).post(`/agent/handoffs/${id}/claim`).type('form').send({ agent: 'ana' });
    expect(form.status).toBe(415);
    expect(await state(s, id)).toBe('waiting');
    // No body: the agent comes from X-Agent, a header a browser sends to another origin only after a preflight.
    expect((await request(s.url).post(`/agent/handoffs/${id}/claim`).set('x-agent', 'ana')).status).toBe(200);
    expect(await state(s, id)).toBe('claimed');
  });
});

describe('loopbackHost', () => {
  it('knows the loopback names, with or without a port, and nothing that only starts like one', () => {
    for (const h of ['localhost', 'LOCALHOST:3000', 'localhost.:80', '127.0.0.1', '127.0.0.1:3000', '127.1.2.3:8080', '[::1]', '[::1]:3000']) expect([h, loopbackHost(h)]).toEqual([h, true]);
    for (const h of [undefined, '', 'evil.localhost', 'localhost.evil.example', '127.0.0.1.nip.io', '127.0.0.1.evil.example:3000', '[::2]:3000', '10.0.0.1', '0.0.0.0:3000']) {
      expect([h, loopbackHost(h)]).toEqual([h, false]);
    }
  });
});
