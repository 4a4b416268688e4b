/**
 * A body the agents' API or the sign-in cannot read (a charset JSON cannot be in, an unknown
 * `Content-Encoding`, a body that does not inflate) is the client's error: a 4xx saying so, not a
 * 500 "internal" logged at error level.
 */
import express from 'express';
import request from 'supertest';
import { afterEach, expect, it } from 'vitest';
import { createAgentRouter } from '../../src/agent/router.js';
import type { Logger } from '../../src/log.js';
import type { RunningServer } from '../../src/server.js';
import { serve, TOKEN, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function start(): Promise<{ s: RunningServer; app: express.Express; errors: string[] }> {
  const { server: s } = await serve();
  cleanup.push(() => s.close());
  const errors: string[] = [];
  const logger = { error: (_o: unknown, m: string) => void errors.push(m), warn: () => undefined, info: () => undefined, debug: () => undefined } as unknown as Logger;
  (logger as unknown as { child: () => Logger }).child = () => logger;
  const app = express().use(createAgentRouter({ desk: s.runtime.handoffs, serviceToken: TOKEN, logger }));
  return { s, app, errors };
}

it('a body in a charset JSON cannot be in is a 4xx, not a 500', async () => {
  const { s, app, errors } = await start();
  const id = await walkToHandoff(s);
  const r = await request(app)
    .post(`/agent/handoffs/${id}/claim`)
    .set({ authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json; charset=latin1' })
    .send('{"agent":"ana"}');
  expect(r.status).toBeGreaterThanOrEqual(400);
  expect(r.status).toBeLessThan(500);
  expect(errors).toEqual([]);
});

it('a body with an unknown or broken Content-Encoding is a 4xx, not a 500', async () => {
  const { s, app, errors } = await start();
  const id = await walkToHandoff(s);
  for (const encoding of ['x-unknown', 'gzip']) {
    const r = await request(app)
      .post(`/agent/handoffs/${id}/claim`)
      .set({ authorization: `Bearer ${TOKEN}`, 'content-type': 'text/plain', 'content-encoding': encoding })
      .send('not compressed');
    expect([encoding, r.status < 500 && r.status >= 400]).toEqual([encoding, true]);
  }
  expect(errors).toEqual([]);
});

it('the sign-in too', async () => {
  const { app, errors } = await start();
  const r = await request(app).post('/agent/session').set('content-type', 'application/json; charset=latin1').send('{"token":"x"}');
  expect(r.status).toBeGreaterThanOrEqual(400);
  expect(r.status).toBeLessThan(500);
  expect(errors).toEqual([]);
});
