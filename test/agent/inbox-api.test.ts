/**
 * The inbox's parts of the agents' API on the real server wiring (sandbox, SQLite or PostgreSQL,
 * runtime) with the support bot: the live queue over Server-Sent Events (this process's changes
 * and another process's on the same database), what the user was offered, canned replies, and the
 * page's refusals without a session.
 */
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRouter } from '../../src/agent/router.js';
import type { RunningServer } from '../../src/server.js';
import { eventually } from '../support/eventually.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { tempDir } from '../support/temp.js';
import { api, serve, TOKEN, USER, walkToHandoff } from './helpers.js';
import { openStream } from './stream.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function start(o: Parameters<typeof serve>[0] = {}): Promise<RunningServer> {
  const { server } = await serve(o);
  cleanup.push(() => server.close());
  return server;
}

const bearer = { authorization: `Bearer ${TOKEN}` };

describe('the live queue (GET /agent/stream)', () => {
  it('sends the queue at once, then again when a handoff changes in this process', async () => {
    const s = await start();
    const stream = await openStream(s, bearer);
    cleanup.push(() => stream.close());
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(stream.headers.get('cache-control')).toBe('no-store');
    await eventually(() => expect(stream.events).toHaveLength(1));
    expect(stream.events[0]).toMatchObject({ event: 'queue', data: { handoffs: [], now: expect.any(Number) } });

    const id = await walkToHandoff(s);
    await eventually(() => expect(stream.events.at(-1)?.data.handoffs).toMatchObject([{ conversationId: id, status: 'waiting', queue: 'billing' }]));
    expect((await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' })).status).toBe(200);
    await eventually(() => expect(stream.events.at(-1)?.data.handoffs).toMatchObject([{ conversationId: id, status: 'claimed', agent: 'ana' }]));
    expect((await api(s, 'POST', `/agent/handoffs/${id}/release`, { agent: 'ana' })).status).toBe(200);
    await eventually(() => expect(stream.events.at(-1)?.data.handoffs).toEqual([]));
  });

  it('stops listening when the client goes', async () => {
    const s = await start();
    const before = (s.runtime.handoffs as unknown as { listeners: Set<unknown> }).listeners.size;
    const stream = await openStream(s, bearer);
    await eventually(() => expect(stream.events).toHaveLength(1));
    expect((s.runtime.handoffs as unknown as { listeners: Set<unknown> }).listeners.size).toBe(before + 1);
    stream.close();
    await eventually(() => expect((s.runtime.handoffs as unknown as { listeners: Set<unknown> }).listeners.size).toBe(before));
  });

  it('sends a comment line while idle, so proxies keep it open', async () => {
    const s = await start();
    const app = express().use(createAgentRouter({ desk: s.runtime.handoffs, serviceToken: TOKEN, streamHeartbeatMs: 250 }));
    const http = createServer(app);
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    cleanup.push(() => new Promise<void>((r) => http.close(() => r())));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const stream = await openStream({ url }, bearer);
    cleanup.push(() => stream.close());
    await eventually(() => expect(stream.comments).toContain('keep-alive'));
  });

  it('is refused without credentials', async () => {
    const s = await start();
    const stream = await openStream(s, {});
    expect(stream.status).toBe(401);
  });

  it.each(['sqlite', 'postgres'] as const)('sees changes another process makes on the same database (%s)', { timeout: 60_000 }, async (engine) => {
    let db: string;
    if (engine === 'postgres') db = await freshDatabaseUrl();
    else {
      const t = tempDir('colloquy-inbox-');
      cleanup.push(() => t.remove());
      db = t.path('shared.db');
    }
    const watched = await start({ db });
    const { server: other, clock } = await serve({ db });
    cleanup.push(() => other.close());
    const stream = await openStream(watched, bearer);
    cleanup.push(() => stream.close());
    await eventually(() => expect(stream.events).toHaveLength(1));

    // The handoff opens in the other process: this one's desk hears nothing of it.
    const id = await walkToHandoff(other);
    await eventually(() => expect(stream.events.at(-1)?.data.handoffs).toMatchObject([{ conversationId: id, status: 'waiting' }]), { timeoutMs: 15_000 });
    expect((await api(other, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'bob' })).status).toBe(200);
    await eventually(() => expect(stream.events.at(-1)?.data.handoffs).toMatchObject([{ conversationId: id, status: 'claimed', agent: 'bob' }]), { timeoutMs: 15_000 });
    // Later, the user writes to the agent through the other process: a new last line.
    clock.advance(1_000);
    await other.runtime.receive({ botId: 'support', user: USER, source: 'whatsapp', event: { type: 'text', text: 'Still there?' } });
    await other.runtime.idle();
    await eventually(() => expect(stream.events.at(-1)?.data.handoffs[0].lastMessages.at(-1)).toMatchObject({ from: 'user', text: 'Still there?' }), { timeoutMs: 15_000 });
    // The agent answers there, at the same instant of the other process's clock.
    expect((await api(other, 'POST', `/agent/handoffs/${id}/messages`, { agent: 'bob', text: 'Yes, one moment.' })).status).toBe(202);
    await eventually(() => expect(stream.events.at(-1)?.data.handoffs[0].lastMessages.at(-1)).toMatchObject({ from: 'agent', agent: 'bob', text: 'Yes, one moment.' }), {
      timeoutMs: 15_000,
    });
    // An internal note changes nothing the queue shows, but a page reading the conversation must hear of it.
    const seen = stream.events.length;
    await other.store.addHandoffNote(id, { name: 'bob', via: 'token' }, 'Customer is a VIP.', clock.now());
    await eventually(() => expect(stream.events.length).toBeGreaterThan(seen), { timeoutMs: 15_000 });
  });
});

describe('GET /agent/conversations/:id', () => {
  it('says what the user was last offered and which choice they tapped, and the server\u2019s clock', async () => {
    const s = await start();
    const id = await walkToHandoff(s);
    const c = await request(s.url).get(`/agent/conversations/${id}`).set(bearer).expect(200);
    expect(c.body.offered).toMatchObject({
      kind: 'buttons',
      from: 'bot',
      choices: [
        { id: 'solved', title: 'Yes, solved' },
        { id: 'agent', title: 'No, talk to a person' },
      ],
      tapped: { id: 'agent', title: 'No, talk to a person', via: 'button' },
    });
    expect(c.body.now).toEqual(expect.any(Number));
    expect(c.body.handoff.timeoutAt).toBe(c.body.handoff.startedAt + 10 * 60_000);

    // An agent offers buttons of its own: that is the last offer now, not yet answered.
    await request(s.url).post(`/agent/handoffs/${id}/claim`).set(bearer).send({ agent: 'ana' }).expect(200);
    await request(s.url)
      .post(`/agent/handoffs/${id}/messages`)
      .set(bearer)
      .set('x-agent', 'ana')
      .send({
        message: {
          kind: 'buttons',
          body: 'Refund or credit?',
          buttons: [
            { id: 'refund', title: 'Refund' },
            { id: 'credit', title: 'Credit' },
          ],
        },
      })
      .expect(202);
    const after = await request(s.url).get(`/agent/conversations/${id}`).set(bearer).expect(200);
    expect(after.body.offered).toMatchObject({ from: 'agent', agent: 'ana', body: 'Refund or credit?', tapped: null });
    expect(after.body.log.map((e: { action: string; agent: string | null }) => [e.action, e.agent])).toEqual([
      ['claim', 'ana'],
      ['message', 'ana'],
    ]);
  });
});

describe('GET /agent/replies', () => {
  it('answers the queue\u2019s canned replies, then every queue\u2019s', async () => {
    const t = tempDir('colloquy-replies-');
    cleanup.push(() => t.remove());
    const path = t.path('replies.json');
    writeFileSync(path, JSON.stringify({ queues: { billing: [{ title: 'Refund', text: 'Your refund is on its way.' }], '*': [{ title: 'Hello', text: 'Hi!' }] } }));
    const { loadConfig } = await import('../../src/config.js');
    const { startServer } = await import('../../src/server.js');
    const support = (await import('../../bots/support.js')).default;
    const config = { ...loadConfig({ COLLOQUY_AGENT_REPLIES_FILE: path }), port: 0, db: ':memory:', logLevel: 'silent' as const, agentToken: TOKEN };
    const s = await startServer({ bots: [support], config });
    cleanup.push(() => s.close());
    expect((await request(s.url).get('/agent/replies?queue=billing').set(bearer).expect(200)).body).toEqual({
      replies: [
        { title: 'Refund', text: 'Your refund is on its way.' },
        { title: 'Hello', text: 'Hi!' },
      ],
    });
    expect((await request(s.url).get('/agent/replies').set(bearer).expect(200)).body.replies.map((r: { title: string }) => r.title)).toEqual(['Hello']);
    expect((await request(s.url).get('/agent/replies?queue=a&b=1').set(bearer).expect(400)).body.error.field).toBe('b');
    await request(s.url).get('/agent/replies').expect(401);
  });
});

describe('the inbox page without a session', () => {
  it('GET /agent answers 401 with the sign-in form, under a strict CSP', async () => {
    const s = await start();
    const res = await request(s.url).get('/agent').expect(401);
    expect(res.type).toBe('text/html');
    expect(res.text).toContain('<form method="post" action="/agent/session"');
    expect(res.text).toContain('name="token" type="password"');
    expect(res.text).not.toContain('colloquy-csrf');
    expect(res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(res.headers['content-security-policy']).toContain("form-action 'self'");
    expect(res.headers['cache-control']).toBe('no-store');
    // A bearer token is the API's, not the page's: still the sign-in form.
    await request(s.url).get('/agent').set(bearer).expect(401);
  });

  it('serves its script and styles, and nothing else under /agent/assets', async () => {
    const s = await start();
    expect((await request(s.url).get('/agent/assets/inbox.js').expect(200)).type).toBe('text/javascript');
    expect((await request(s.url).get('/agent/assets/inbox.css').expect(200)).type).toBe('text/css');
    await request(s.url).get('/agent/assets/..%2Fpages.ts').expect(404);
    await request(s.url).get('/agent/assets/html.ts').expect(404);
    expect((await request(s.url).get('/agent/assets/inbox-view.js').expect(200)).type).toBe('text/javascript');
  });

  it('refuses a sign-in another site made the browser send', async () => {
    const s = await start();
    const form = await request(s.url).post('/agent/session').set('origin', 'https://evil.example').type('form').send({ token: TOKEN }).expect(403);
    expect(form.headers['set-cookie']).toBeUndefined();
    expect(form.text).toContain('Sign-in from another site is refused');
    await request(s.url).post('/agent/session').set('sec-fetch-site', 'cross-site').send({ token: TOKEN }).expect(403);
    const none = await request(s.url).post('/agent/session').type('form').send({ token: 'not-an-agent-token-0123456789' }).expect(401);
    expect(none.headers['set-cookie']).toBeUndefined();
    expect(none.text).toContain('That token is not an agent');
  });
});
