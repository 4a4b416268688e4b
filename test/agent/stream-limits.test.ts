/**
 * The live queue's limits and how it ends: streams per agent (429) and in all (503), a client that
 * stops reading is closed once it stayed blocked past `streamStallMs`, signing out ends that
 * session's streams at once, and an agent removed by another process (no change this process
 * hears of) loses its streams at the next periodic check.
 */
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENT_SESSION_COOKIE, newAgentToken, secretHash, startAgentSession } from '../../src/agent/auth.js';
import { createAgentRouter, type AgentRouterOptions } from '../../src/agent/router.js';
import type { RunningServer } from '../../src/server.js';
import { eventually } from '../support/eventually.js';
import { serve, TOKEN, user, walkToHandoff } from './helpers.js';
import { openStream } from './stream.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** The agents' router over a served bot's desk, with `o`, on its own port; `streams` are the stream responses it served. */
async function router(s: RunningServer, o: Partial<AgentRouterOptions> = {}): Promise<{ url: string; streams: Response[] }> {
  const streams: Response[] = [];
  const app = express()
    .use((req, res, next) => {
      if (req.path === '/agent/stream') streams.push(res);
      next();
    })
    .use(createAgentRouter({ desk: s.runtime.handoffs, serviceToken: TOKEN, ...o }));
  const http = createServer(app);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, streams };
}

async function started(): Promise<{ s: RunningServer; token: string }> {
  const { server: s } = await serve();
  cleanup.push(() => s.close());
  const token = newAgentToken();
  expect(await s.store.addAgent('ana', secretHash(token), Date.now())).toBe(true);
  return { s, token };
}

async function opened(url: string, headers: Record<string, string>) {
  const stream = await openStream({ url }, headers);
  cleanup.push(() => stream.close());
  return stream;
}

describe('how many live queues', () => {
  it('refuses a stream past the per-agent limit (429) and past the total (503), and takes one again once another closed', async () => {
    const { s, token } = await started();
    const { url } = await router(s, { maxStreamsPerAgent: 2, maxStreams: 3 });
    const ana = { authorization: `Bearer ${token}` };
    const first = await opened(url, ana);
    await opened(url, ana);
    const third = await fetch(`${url}/agent/stream`, { headers: ana });
    expect(third.status).toBe(429);
    expect(((await third.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'too_many_streams', message: expect.stringContaining('2 live queues') });

    // The service account counts apart from ana, but the server's total is reached.
    await opened(url, { authorization: `Bearer ${TOKEN}` });
    const fourth = await fetch(`${url}/agent/stream`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(fourth.status).toBe(503);
    expect(((await fourth.json()) as { error: { code: string } }).error.code).toBe('busy');

    first.close();
    await eventually(async () => {
      const again = await opened(url, ana);
      expect(again.status).toBe(200);
    });
  });
});

describe('how a live queue ends', () => {
  it('closes a stream whose client stopped reading once it stayed blocked past streamStallMs', { timeout: 60_000 }, async () => {
    const { s } = await started();
    // A queue of about 100 kB: more than the response's buffer takes before it says "full".
    for (let i = 0; i < 5; i++) {
      const who = `52155123400${String(10 + i)}`;
      await walkToHandoff(s, who);
      for (let j = 0; j < 5; j++) await user(s, { type: 'text', text: `${j} ${'x'.repeat(4000)}` }, who);
    }
    const { url, streams } = await router(s, { streamStallMs: 200 });
    const port = new URL(url).port;
    const stalled = connect(Number(port), '127.0.0.1');
    cleanup.push(() => void stalled.destroy());
    await new Promise<void>((r) => stalled.once('connect', r));
    stalled.pause();
    stalled.write(`GET /agent/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
    await eventually(() => expect(streams).toHaveLength(1));
    // Changes keep coming until the kernel's buffers are full too and the stream is closed.
    await eventually(
      () => {
        s.runtime.handoffs.changed();
        expect(streams[0]!.destroyed).toBe(true);
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
  });

  it('signing out ends the session’s streams at once, with no change to the queue and no periodic check', async () => {
    const { s, token } = await started();
    const { url } = await router(s, { streamCheckMs: 3_600_000 });
    const session = (await startAgentSession(s.store, token, Date.now()))!;
    const cookie = `${AGENT_SESSION_COOKIE}=${session.id}`;
    const stream = await opened(url, { cookie });
    const other = await opened(url, { authorization: `Bearer ${token}` });
    await eventually(() => expect(stream.events).toHaveLength(1));
    await request(url).post('/agent/session/end').set({ cookie, 'x-csrf-token': session.csrf }).expect(204);
    await eventually(() => expect(stream.ended()).toBe(true));
    // The same agent's token stream is another credential: it stays.
    await walkToHandoff(s);
    await eventually(() => expect(other.events.at(-1)?.data.handoffs).toHaveLength(1));
    expect(other.ended()).toBe(false);
  });

  it('an agent removed by another process (nothing this process hears of) loses its streams at the next check', async () => {
    const { s, token } = await started();
    const { url } = await router(s, { streamCheckMs: 100 });
    const stream = await opened(url, { authorization: `Bearer ${token}` });
    const service = await opened(url, { authorization: `Bearer ${TOKEN}` });
    await eventually(() => expect(stream.events).toHaveLength(1));
    // The store alone, as `colloquy agents remove` in another process: the desk hears of nothing.
    await s.store.removeAgent('ana', { now: Date.now(), notify: false });
    await eventually(() => expect(stream.ended()).toBe(true));
    expect(service.ended()).toBe(false);
  });
});
