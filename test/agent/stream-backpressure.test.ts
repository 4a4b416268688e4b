/**
 * A client of `GET /agent/stream` that stops reading (a phone on a bad network, a stalled tab) does
 * not make the server keep every queue sent meanwhile: while the response's buffer is full the
 * stream keeps only the latest queue, written once the client drains it.
 */
import { createServer } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { afterEach, expect, it } from 'vitest';
import { createAgentRouter } from '../../src/agent/router.js';
import { eventually } from '../support/eventually.js';
import { serve, TOKEN, user, walkToHandoff } from './helpers.js';
import { openStream } from './stream.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

it('a stream whose client stopped reading does not buffer every queue sent meanwhile', { timeout: 120_000 }, async () => {
  const { server: s } = await serve();
  cleanup.push(() => s.close());
  // A queue of about 200 kB: ten handoffs, each with five long lines from its user.
  for (let i = 0; i < 10; i++) {
    const who = `52155123400${String(10 + i)}`;
    await walkToHandoff(s, who);
    for (let j = 0; j < 5; j++) await user(s, { type: 'text', text: `${j} ${'x'.repeat(4000)}` }, who);
  }

  const streams: Response[] = [];
  const app = express()
    .use((req, res, next) => {
      if (req.path === '/agent/stream') streams.push(res);
      next();
    })
    // The stalled stream must outlast the test however slow the machine (another test covers closing it).
    .use(createAgentRouter({ desk: s.runtime.handoffs, serviceToken: TOKEN, streamStallMs: 600_000 }));
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

  // The stalled client: sends its request, then never reads.
  const stalled = connect(port, '127.0.0.1');
  cleanup.push(() => void stalled.destroy());
  await new Promise<void>((r) => stalled.once('connect', r));
  stalled.pause();
  stalled.write(`GET /agent/stream HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`);
  await eventually(() => expect(streams).toHaveLength(1));

  // A client that reads: it tells when each queue has been written to both streams.
  const reader = await openStream({ url: `http://127.0.0.1:${port}` }, { authorization: `Bearer ${TOKEN}` });
  cleanup.push(() => reader.close());
  await eventually(() => expect(reader.events.length).toBeGreaterThanOrEqual(1));

  const res = streams[0]!;
  for (let n = 0; n < 200 && !res.destroyed; n++) {
    const seen = reader.events.length;
    s.runtime.handoffs.changed();
    await eventually(() => expect(reader.events.length).toBeGreaterThan(seen));
  }
  // About 40 MB were sent to a client that read none of it; the kernel holds a few MB at most.
  expect(res.destroyed ? 0 : res.writableLength).toBeLessThan(8 * 1024 * 1024);
  // Once it reads again, the client still gets the latest queue, with what changed while it did not read.
  expect(res.destroyed).toBe(false);
  const id = await walkToHandoff(s, '5215512349876');
  let got = '';
  stalled.on('data', (chunk: Buffer) => {
    got += chunk.toString('utf8');
  });
  stalled.resume();
  await eventually(() => expect(got).toContain(`"conversationId":${id}`), { timeoutMs: 30_000 });
});
