/**
 * Agents with identities over real HTTP (supertest against the server on 127.0.0.1): an agent's
 * own token acts only as that agent (403 otherwise), a removed or rotated agent's token is refused
 * at once, the service token acts for the agent it names, the handoff log records who acted and
 * how, notes, and inbox sessions (CSRF, expiry on the server's clock, sign-out, removal).
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { endAgentSession, newAgentToken, secretHash, startAgentSession, AGENT_CSRF_HEADER, AGENT_SESSION_COOKIE } from '../../src/agent/auth.js';
import type { ManualClock } from '../../src/conversation/clock.js';
import type { RunningServer } from '../../src/server.js';
import { serve, TOKEN, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function start(o: Parameters<typeof serve>[0] = {}): Promise<{ server: RunningServer; clock: ManualClock; http: ReturnType<typeof request> }> {
  const { server, clock } = await serve(o);
  cleanup.push(() => server.close());
  return { server, clock, http: request(server.url) };
}

/** Adds an agent the way `colloquy agents add` does; returns its token. */
async function addAgent(server: RunningServer, name: string): Promise<string> {
  const token = newAgentToken();
  expect(await server.store.addAgent(name, secretHash(token), Date.now())).toBe(true);
  return token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const who = (server: RunningServer, id: number) => server.runtime.handoffs.log(id).then((log) => log.map((e) => [e.action, e.agent, e.via]));

describe("agents' identities", () => {
  it("an agent's token acts as that agent: a body or X-Agent naming another is 403 and changes nothing", async () => {
    const { server, http } = await start();
    const ana = await addAgent(server, 'ana');
    const id = await walkToHandoff(server);
    for (const [body, headers] of [
      [{ agent: 'bob' }, {}],
      [{}, { 'x-agent': 'bob' }],
    ] as const) {
      const r = await http
        .post(`/agent/handoffs/${id}/claim`)
        .set({ ...bearer(ana), ...headers })
        .send(body);
      expect(r.status).toBe(403);
      expect(r.body.error).toMatchObject({ code: 'forbidden', message: expect.stringContaining('"ana"') });
    }
    expect(await server.store.openHandoff(id)).toMatchObject({ state: 'waiting' });
    const r = await http
      .post(`/agent/handoffs/${id}/claim`)
      .set({ ...bearer(ana), 'x-agent': 'ana' })
      .send({});
    expect(r.status).toBe(200);
    expect(r.body.handoff).toMatchObject({ state: 'claimed', agent: 'ana' });
    const msg = await http.post(`/agent/handoffs/${id}/messages`).set(bearer(ana)).send({ agent: 'bob', text: 'I am bob' });
    expect(msg.status).toBe(403);
    expect(server.sandbox!.messages.filter((m) => JSON.stringify(m.request).includes('I am bob'))).toEqual([]);
    expect(await who(server, id)).toEqual([['claim', 'ana', 'token']]);
  });

  it("a removed agent's token is refused at once; its claim goes back to the queue", async () => {
    const { server, http } = await start();
    const ana = await addAgent(server, 'ana');
    const id = await walkToHandoff(server);
    expect((await http.post(`/agent/handoffs/${id}/claim`).set(bearer(ana)).send({})).status).toBe(200);
    await server.store.removeAgent('ana', { now: server.runtime.clock.now(), notify: false });
    const r = await http.get('/agent/handoffs').set(bearer(ana));
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toContain('Bearer');
    expect(r.body.error.code).toBe('unauthorized');
    expect(await server.store.openHandoff(id)).toMatchObject({ state: 'waiting', agent: 'ana' });
  });

  it('a rotated token: the old one is refused at once, the new one works', async () => {
    const { server, http } = await start();
    const old = await addAgent(server, 'ana');
    const fresh = newAgentToken();
    expect((await http.get('/agent/handoffs').set(bearer(old))).status).toBe(200);
    await server.store.setAgentToken('ana', secretHash(fresh));
    expect((await http.get('/agent/handoffs').set(bearer(old))).status).toBe(401);
    expect((await http.get('/agent/handoffs').set(bearer(fresh))).status).toBe(200);
  });

  it('the service token acts for the agent it names, recorded as service; naming none is 400', async () => {
    const { server, http } = await start();
    const id = await walkToHandoff(server);
    const none = await http.post(`/agent/handoffs/${id}/claim`).set(bearer(TOKEN)).send({});
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({ code: 'invalid', field: 'agent', message: expect.stringContaining('COLLOQUY_AGENT_TOKEN acts for the agent the request names') });
    expect(
      (
        await http
          .post(`/agent/handoffs/${id}/claim`)
          .set({ ...bearer(TOKEN), 'x-agent': 'carl' })
          .send({})
      ).status,
    ).toBe(200);
    expect((await http.post(`/agent/handoffs/${id}/messages`).set(bearer(TOKEN)).send({ agent: 'carl', text: 'Carl here.' })).status).toBe(202);
    expect(await who(server, id)).toEqual([
      ['claim', 'carl', 'service'],
      ['message', 'carl', 'service'],
    ]);
  });

  it('the log records who claimed, wrote, noted and released; any agent may note, the user never sees it', async () => {
    const { server, http } = await start();
    const ana = await addAgent(server, 'ana');
    const bob = await addAgent(server, 'bob');
    const id = await walkToHandoff(server);
    const sent = server.sandbox!.messages.length;
    expect((await http.post(`/agent/handoffs/${id}/claim`).set(bearer(ana)).send({})).status).toBe(200);
    expect((await http.post(`/agent/handoffs/${id}/messages`).set(bearer(ana)).send({ text: 'Ana here.' })).status).toBe(202);
    const note = await http.post(`/agent/handoffs/${id}/notes`).set(bearer(bob)).send({ text: 'Refund approved by finance.' });
    expect(note.status).toBe(201);
    expect(note.body.note).toMatchObject({ action: 'note', agent: 'bob', via: 'token', text: 'Refund approved by finance.', conversationId: id });
    expect((await http.post(`/agent/handoffs/${id}/release`).set(bearer(ana)).send({ note: 'refunded' })).status).toBe(200);
    await server.runtime.idle();
    expect(await who(server, id)).toEqual([
      ['claim', 'ana', 'token'],
      ['message', 'ana', 'token'],
      ['note', 'bob', 'token'],
      ['release', 'ana', 'token'],
    ]);
    expect(server.sandbox!.messages.slice(sent).some((m) => JSON.stringify(m.request).includes('finance'))).toBe(false);
    // Bad notes are 400 naming the field; none once the handoff ended.
    for (const [body, field] of [
      [{ text: '' }, 'text'],
      [{ text: 'x'.repeat(2001) }, 'text'],
      [{}, 'text'],
    ] as const) {
      const r = await http.post(`/agent/handoffs/${id}/notes`).set(bearer(bob)).send(body);
      expect([r.status, r.body.error.field]).toEqual([400, field]);
    }
    const late = await http.post(`/agent/handoffs/${id}/notes`).set(bearer(bob)).send({ text: 'too late' });
    expect([late.status, late.body.error.code]).toEqual([409, 'conflict']);
  });

  it('sessions: reads pass, writes need the CSRF header, and the session ends when it expires, is ended, or its agent goes', async () => {
    const { server, clock, http } = await start();
    const ana = await addAgent(server, 'ana');
    const id = await walkToHandoff(server);
    expect(await startAgentSession(server.store, 'cq_agent_nobody', clock.now())).toBeUndefined();
    const s = (await startAgentSession(server.store, ana, clock.now()))!;
    expect(s).toMatchObject({ agent: 'ana', expiresAt: clock.now() + 12 * 3_600_000 });
    expect(s.id.length).toBeGreaterThanOrEqual(43);
    const cookie = { cookie: `other=1; ${AGENT_SESSION_COOKIE}=${s.id}` };
    expect((await http.get('/agent/handoffs').set(cookie)).status).toBe(200);
    const noCsrf = await http.post(`/agent/handoffs/${id}/claim`).set(cookie).send({});
    expect([noCsrf.status, noCsrf.body.error.code]).toEqual([403, 'csrf']);
    const wrongCsrf = await http
      .post(`/agent/handoffs/${id}/claim`)
      .set({ ...cookie, [AGENT_CSRF_HEADER]: 'x' })
      .send({});
    expect(wrongCsrf.status).toBe(403);
    const other = await http
      .post(`/agent/handoffs/${id}/claim`)
      .set({ ...cookie, [AGENT_CSRF_HEADER]: s.csrf })
      .send({ agent: 'bob' });
    expect([other.status, other.body.error.code]).toEqual([403, 'forbidden']);
    expect(
      (
        await http
          .post(`/agent/handoffs/${id}/claim`)
          .set({ ...cookie, [AGENT_CSRF_HEADER]: s.csrf })
          .send({})
      ).status,
    ).toBe(200);
    expect(await who(server, id)).toEqual([['claim', 'ana', 'session']]);

    clock.advance(12 * 3_600_000 - 1);
    expect((await http.get('/agent/handoffs').set(cookie)).status).toBe(200);
    clock.advance(1);
    expect((await http.get('/agent/handoffs').set(cookie)).status).toBe(401);

    const ended = (await startAgentSession(server.store, ana, clock.now()))!;
    await endAgentSession(server.store, ended.id);
    expect((await http.get('/agent/handoffs').set({ cookie: `${AGENT_SESSION_COOKIE}=${ended.id}` })).status).toBe(401);

    const last = (await startAgentSession(server.store, ana, clock.now()))!;
    expect((await http.get('/agent/handoffs').set({ cookie: `${AGENT_SESSION_COOKIE}=${last.id}` })).status).toBe(200);
    // Twelve hours on, ana's claim went back to the queue long ago (idle claims end after 30 minutes).
    expect(await server.store.removeAgent('ana', { now: clock.now(), notify: false })).toMatchObject({ removed: true, sessions: 1, claims: 0 });
    expect((await http.get('/agent/handoffs').set({ cookie: `${AGENT_SESSION_COOKIE}=${last.id}` })).status).toBe(401);
  });

  it('the sandbox without a service token: loopback names itself (open), but a bearer given must be valid', async () => {
    const { server, http } = await start({ token: null });
    const id = await walkToHandoff(server);
    expect((await http.post(`/agent/handoffs/${id}/claim`).send({ agent: 'sam' })).status).toBe(200);
    expect(await who(server, id)).toEqual([['claim', 'sam', 'open']]);
    expect((await http.get('/agent/handoffs').set(bearer('cq_agent_not-a-token'))).status).toBe(401);
  });
});
