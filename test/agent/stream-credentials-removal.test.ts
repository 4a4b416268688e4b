/**
 * The live queue of an agent that is gone: a stream opened with a session (or, for a rotation, the
 * agent's bearer token) ends once the agent is removed, the session ended in the store, or the
 * token replaced, and carries no handoff opened afterwards.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { newAgentToken, secretHash, startAgentSession, AGENT_SESSION_COOKIE, endAgentSession } from '../../src/agent/auth.js';
import { eventually } from '../support/eventually.js';
import { serve, walkToHandoff } from './helpers.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A stream that also says when the server ended it. */
async function stream(url: string, headers: Record<string, string>) {
  const stop = new AbortController();
  const res = await fetch(`${url}/agent/stream`, { headers, signal: stop.signal });
  const s = { status: res.status, queues: [] as any[], ended: false, close: () => stop.abort() };
  cleanup.push(() => s.close());
  void (async () => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      for (let end = buf.indexOf('\n\n'); end >= 0; end = buf.indexOf('\n\n')) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const data = block.split('\n').find((l) => l.startsWith('data: '));
        if (block.includes('event: queue') && data) s.queues.push(JSON.parse(data.slice(6)));
      }
    }
    s.ended = true;
  })().catch(() => {
    s.ended = true;
  });
  return s;
}

describe("the agents' live queue after its agent is gone", () => {
  for (const how of ['removed', 'signed out', 'given a new token'] as const) {
    it(`a stream opened with a session (a bearer token when rotated) gets nothing more once the agent is ${how}`, async () => {
      const { server, clock } = await serve();
      cleanup.push(() => server.close());
      const token = newAgentToken();
      await server.store.addAgent('ana', secretHash(token), clock.now());
      const session = (await startAgentSession(server.store, token, clock.now()))!;
      const s = await stream(server.url, how === 'given a new token' ? { authorization: `Bearer ${token}` } : { cookie: `${AGENT_SESSION_COOKIE}=${session.id}` });
      expect(s.status).toBe(200);
      await eventually(() => expect(s.queues.length).toBeGreaterThan(0), { what: 'the first queue' });

      if (how === 'removed') await server.store.removeAgent('ana', { now: clock.now(), notify: false });
      else if (how === 'signed out') await endAgentSession(server.store, session.id);
      else await server.store.setAgentToken('ana', secretHash(newAgentToken()));

      // A new customer asks for a person: the queue changes.
      const id = await walkToHandoff(server, '5215512349999');
      await eventually(() => expect(s.ended || s.queues.some((q) => q.handoffs.some((h: any) => h.conversationId === id))).toBe(true), {
        what: 'the stream to end, or to show the new handoff',
      });
      expect(s.queues.filter((q) => q.handoffs.some((h: any) => h.conversationId === id))).toEqual([]);
      expect(s.ended).toBe(true);
    });
  }
});
