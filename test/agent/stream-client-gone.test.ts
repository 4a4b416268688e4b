/**
 * A client that leaves while `GET /agent/stream` is being authenticated (the token and session
 * lookups are awaited; on PostgreSQL a round trip) leaves nothing behind: the response's 'close'
 * has already fired, so the stream must not subscribe to the desk's changes at all.
 */
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { afterEach, expect, it } from 'vitest';
import { newAgentToken, secretHash } from '../../src/agent/auth.js';
import { createAgentRouter } from '../../src/agent/router.js';
import type { AgentStore } from '../../src/store/agent-types.js';
import { eventually } from '../support/eventually.js';
import { serve } from './helpers.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

it('a stream whose client left during authentication leaves no listener behind', async () => {
  const { server: s } = await serve();
  cleanup.push(() => s.close());
  const desk = s.runtime.handoffs;
  const listeners = () => (desk as unknown as { listeners: Set<unknown> }).listeners.size;
  const before = listeners();

  let reached = false;
  let closed: Promise<void> = Promise.resolve();
  let looked!: () => void;
  const lookedUp = new Promise<void>((r) => (looked = r));
  // The agents' store as the server has it, except that the token lookup finishes after the client left.
  const slow = new Proxy(s.store as AgentStore, {
    get(target, prop, receiver) {
      if (prop === 'agentByTokenHash') {
        return async (h: string) => {
          await closed;
          const found = await target.agentByTokenHash(h);
          setImmediate(looked); // after the middleware has gone on with what it found
          return found;
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const app = express()
    .use((req, res: Response, next) => {
      if (req.path === '/agent/stream') {
        closed = new Promise((r) => res.once('close', () => r()));
        reached = true;
      }
      next();
    })
    .use(createAgentRouter({ desk, store: slow, serviceToken: 'service-token-0123456789' }));
  const http = createServer(app);
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise<void>((r) => {
        http.closeAllConnections();
        http.close(() => r());
      }),
  );
  const port = (http.address() as AddressInfo).port;

  const token = newAgentToken();
  await s.store.addAgent('ana', secretHash(token), Date.now());
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', r));
  socket.write(`GET /agent/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n\r\n`);
  await eventually(() => reached);
  socket.destroy();
  await lookedUp;
  // The stream's handler has run on a response that is already closed: nothing of it may stay.
  await eventually(() => expect(listeners()).toBe(before), { timeoutMs: 3_000 });
});
