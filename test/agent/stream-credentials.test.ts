/**
 * An open `GET /agent/stream` does not outlive the credentials it was opened with: once its session
 * is signed out (in another tab), its agent removed, or its token rotated, the server ends it, and
 * the live queue (users' numbers, reasons, the last lines of each conversation) stops there.
 */
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { newAgentToken, secretHash } from '../../src/agent/auth.js';
import type { RunningServer } from '../../src/server.js';
import { eventually } from '../support/eventually.js';
import { serve, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A stream reader that also says when the server ended the response. */
async function open(url: string, headers: Record<string, string>) {
  const stop = new AbortController();
  const res = await fetch(`${url}/agent/stream`, { headers, signal: stop.signal });
  const s = { status: res.status, datas: [] as string[], ended: false, close: () => stop.abort() };
  cleanup.push(() => s.close());
  if (!res.ok || !res.body) return s;
  void (async () => {
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          for (const line of block.split('\n')) if (line.startsWith('data: ')) s.datas.push(line.slice(6));
        }
      }
    } catch {
      // aborted by the test
    }
    s.ended = true;
  })();
  return s;
}

async function start(): Promise<{ s: RunningServer; token: string }> {
  const { server: s } = await serve();
  cleanup.push(() => s.close());
  const token = newAgentToken();
  expect(await s.store.addAgent('ana', secretHash(token), Date.now())).toBe(true);
  return { s, token };
}

async function signIn(s: RunningServer, token: string): Promise<{ cookie: string; csrf: string }> {
  const res = await request(s.url).post('/agent/session').send({ token }).expect(200);
  const cookie = (res.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
  const page = await request(s.url).get('/agent').set('cookie', cookie).expect(200);
  return { cookie, csrf: /<meta name="colloquy-csrf" content="([^"]+)">/.exec(page.text)![1]! };
}

/**
 * After `revoke`, a new handoff opens (a change every stream is told of). The stream must end
 * without carrying the new conversation's user number or messages to the revoked caller.
 */
async function expectStreamStops(s: RunningServer, stream: Awaited<ReturnType<typeof open>>, revoke: () => Promise<unknown>) {
  expect(stream.status).toBe(200);
  await eventually(() => expect(stream.datas.length).toBeGreaterThan(0));
  await revoke();
  const id = await walkToHandoff(s);
  // Either the server ends the stream, or it leaks the new handoff to the revoked caller.
  await eventually(() => stream.ended || stream.datas.some((d) => d.includes(`"conversationId":${id}`)));
  expect(stream.datas.filter((d) => d.includes('I was charged twice'))).toEqual([]);
  expect(stream.ended).toBe(true);
}

describe('the live queue stops with its credentials', () => {
  it('a session signed out elsewhere (another tab)', async () => {
    const { s, token } = await start();
    const { cookie, csrf } = await signIn(s, token);
    const stream = await open(s.url, { cookie });
    await expectStreamStops(s, stream, () => request(s.url).post('/agent/session/end').set('cookie', cookie).set('x-csrf-token', csrf).expect(204));
  });

  it('a session whose agent was removed (colloquy agents remove)', async () => {
    const { s, token } = await start();
    const { cookie } = await signIn(s, token);
    const stream = await open(s.url, { cookie });
    await expectStreamStops(s, stream, () => s.store.removeAgent('ana', { now: Date.now(), notify: false }));
  });

  it("an agent's bearer token once rotated (colloquy agents rotate)", async () => {
    const { s, token } = await start();
    const stream = await open(s.url, { authorization: `Bearer ${token}` });
    await expectStreamStops(s, stream, () => s.store.setAgentToken('ana', secretHash(newAgentToken())));
  });
});
