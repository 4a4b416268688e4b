/**
 * Signing in to the inbox with an agent's token: the session cookie's flags, the page with its CSRF
 * value, writes refused without it, sign-out, and a session that ends when its agent is removed.
 * Real server wiring (sandbox, SQLite, runtime), supertest on loopback.
 */
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { newAgentToken, secretHash } from '../../src/agent/auth.js';
import { createAgentRouter } from '../../src/agent/router.js';
import type { RunningServer } from '../../src/server.js';
import { eventually } from '../support/eventually.js';
import { serve, walkToHandoff } from './helpers.js';
import { openStream } from './stream.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A server (the service token set, so nothing is open) and an agent `ana` with her token. */
async function start(): Promise<{ s: RunningServer; token: string }> {
  const { server: s } = await serve();
  cleanup.push(() => s.close());
  const token = newAgentToken();
  expect(await s.store.addAgent('ana', secretHash(token), Date.now())).toBe(true);
  return { s, token };
}

/** Signs in with the form; answers the cookie (`name=value`) and the inbox page's CSRF value. */
async function signIn(s: RunningServer, token: string): Promise<{ cookie: string; csrf: string; html: string }> {
  const res = await request(s.url).post('/agent/session').type('form').send({ token }).expect(303);
  expect(res.headers['location']).toBe('/agent');
  const cookie = (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
  const page = await request(s.url).get('/agent').set('cookie', cookie).expect(200);
  const csrf = /<meta name="colloquy-csrf" content="([^"]+)">/.exec(page.text)?.[1];
  expect(csrf).toBeDefined();
  return { cookie, csrf: csrf!, html: page.text };
}

describe('inbox sign-in', () => {
  it('a form with the token opens a session: an HttpOnly, SameSite=Strict cookie on /agent, then the inbox', async () => {
    const { s, token } = await start();
    const res = await request(s.url).post('/agent/session').type('form').send({ token }).expect(303);
    const set = (res.headers['set-cookie'] as unknown as string[])[0]!;
    expect(set).toMatch(/^colloquy_agent=[A-Za-z0-9_-]{43}; /);
    expect(set).toContain('HttpOnly');
    expect(set).toContain('SameSite=Strict');
    expect(set).toContain('Path=/agent');
    expect(set).toContain('Max-Age=43200');
    expect(set).not.toContain('Secure'); // plain HTTP here
    expect(set).not.toContain(token);
    expect(res.headers['cache-control']).toBe('no-store');

    const { html, csrf } = await signIn(s, token);
    expect(html).toContain('<strong id="me">ana</strong>');
    expect(html).not.toContain(token);
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{32}$/);
  });

  it('JSON sign-in answers who signed in; a wrong or missing token is refused and sets nothing', async () => {
    const { s, token } = await start();
    const ok = await request(s.url).post('/agent/session').send({ token }).expect(200);
    expect(ok.body).toEqual({ agent: 'ana', expiresAt: expect.any(Number) });
    expect(ok.body).not.toHaveProperty('csrf');
    const wrong = await request(s.url).post('/agent/session').send({ token: newAgentToken() }).expect(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.body.error.code).toBe('unauthorized');
    await request(s.url).post('/agent/session').send({}).expect(400);
    const form = await request(s.url).post('/agent/session').type('form').send({ token: 'nope' }).expect(401);
    expect(form.text).toContain('That token is not an agent');
  });

  it('sets Secure on the cookie behind a proxy that ended TLS, and takes the proxied page\u2019s own Origin', async () => {
    const { s, token } = await start();
    const host = new URL(s.url).host;
    const res = await request(s.url).post('/agent/session').set('x-forwarded-proto', 'https').set('origin', `https://${host}`).type('form').send({ token }).expect(303);
    expect((res.headers['set-cookie'] as unknown as string[])[0]).toContain('Secure');
    await request(s.url).post('/agent/session').set('origin', 'https://inbox.example').type('form').send({ token }).expect(403);
    await request(s.url).post('/agent/session').set('origin', 'null').type('form').send({ token }).expect(403);
  });

  it('sets Secure on the cookie when the request came over HTTPS', async () => {
    const { s, token } = await start();
    const app = express();
    app.set('trust proxy', 'loopback');
    app.use(createAgentRouter({ desk: s.runtime.handoffs }));
    const res = await request(app).post('/agent/session').set('x-forwarded-proto', 'https').set('host', 'inbox.example').send({ token }).expect(200);
    expect((res.headers['set-cookie'] as unknown as string[])[0]).toContain('Secure');
  });
});

describe('a signed-in session', () => {
  it('reads and writes as its agent; a write without the page\u2019s CSRF value is refused', async () => {
    const { s, token } = await start();
    const { cookie, csrf } = await signIn(s, token);
    const id = await walkToHandoff(s);
    expect((await request(s.url).get('/agent/me').set('cookie', cookie).expect(200)).body).toEqual({ agent: 'ana', via: 'session' });
    await request(s.url).get('/agent/handoffs').set('cookie', cookie).expect(200);

    const refused = await request(s.url).post(`/agent/handoffs/${id}/claim`).set('cookie', cookie).send({}).expect(403);
    expect(refused.body.error.code).toBe('csrf');
    await request(s.url).post(`/agent/handoffs/${id}/claim`).set('cookie', cookie).set('x-csrf-token', 'not-it').send({}).expect(403);
    expect((await s.store.openHandoff(id))!.state).toBe('waiting');

    const claimed = await request(s.url).post(`/agent/handoffs/${id}/claim`).set('cookie', cookie).set('x-csrf-token', csrf).send({}).expect(200);
    expect(claimed.body.handoff).toMatchObject({ state: 'claimed', agent: 'ana' });
    await request(s.url).post(`/agent/handoffs/${id}/claim`).set('cookie', cookie).set('x-csrf-token', csrf).send({ agent: 'bob' }).expect(403);
  });

  it('opens the live queue with the cookie alone', async () => {
    const { s, token } = await start();
    const { cookie } = await signIn(s, token);
    const stream = await openStream(s, { cookie });
    cleanup.push(() => stream.close());
    expect(stream.status).toBe(200);
    await eventually(() => expect(stream.events).toHaveLength(1));
    const id = await walkToHandoff(s);
    await eventually(() => expect(stream.events.at(-1)?.data.handoffs).toMatchObject([{ conversationId: id }]));
  });

  it('signs out with the CSRF value (not without): the cookie is cleared and the session is dead', async () => {
    const { s, token } = await start();
    const { cookie, csrf } = await signIn(s, token);
    await request(s.url).post('/agent/session/end').set('cookie', cookie).expect(403);
    await request(s.url).get('/agent').set('cookie', cookie).expect(200);

    const out = await request(s.url).post('/agent/session/end').set('cookie', cookie).set('x-csrf-token', csrf).expect(204);
    expect((out.headers['set-cookie'] as unknown as string[])[0]).toMatch(/^colloquy_agent=; .*Expires=Thu, 01 Jan 1970/);
    const after = await request(s.url).get('/agent').set('cookie', cookie).expect(401);
    expect(after.text).toContain('action="/agent/session"');
    await request(s.url).get('/agent/handoffs').set('cookie', cookie).expect(401);
    expect((await openStream(s, { cookie })).status).toBe(401);
  });

  it('signs out with the page\u2019s form (its hidden CSRF field), back to the sign-in form', async () => {
    const { s, token } = await start();
    const { cookie, csrf } = await signIn(s, token);
    const out = await request(s.url).post('/agent/session/end').set('cookie', cookie).type('form').send({ csrf }).expect(303);
    expect(out.headers['location']).toBe('/agent');
    await request(s.url).get('/agent').set('cookie', cookie).expect(401);
  });

  it('ends when its agent is removed', async () => {
    const { s, token } = await start();
    const { cookie } = await signIn(s, token);
    await s.store.removeAgent('ana', { now: Date.now(), notify: false });
    await request(s.url).get('/agent').set('cookie', cookie).expect(401);
    await request(s.url).get('/agent/me').set('cookie', cookie).expect(401);
  });
});

describe('createAgentRouter options', () => {
  it('still honours `token`, the service token option of before agents had tokens of their own', async () => {
    const { s } = await start();
    const service = 'service-token-of-the-helpdesk-0123456789';
    const app = express().use(createAgentRouter({ desk: s.runtime.handoffs, token: service }));
    const me = await request(app).get('/agent/me').set('authorization', `Bearer ${service}`).set('x-agent', 'bob').expect(200);
    expect(me.body).toEqual({ agent: 'bob', via: 'service' });
    await request(app).get('/agent/me').set('authorization', 'Bearer not-the-service-token-0123456789').set('x-agent', 'bob').expect(401);
  });
});
