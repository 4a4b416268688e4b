/** `GET /_sandbox/` lists the credentials and every route, so nobody has to read the source to drive it. */
import express from 'express';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET } from '../../src/sandbox/index.js';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A sandbox mounted at `/sandbox`, as `colloquy serve` mounts it. */
async function mounted(): Promise<string> {
  const app = express();
  app.use('/sandbox', createSandbox().router);
  server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  return `http://127.0.0.1:${address.port}`;
}

interface Route {
  method: string;
  path: string;
  does: string;
  body?: unknown;
}

describe('GET /sandbox/_sandbox/', () => {
  it('lists the credentials, the provider routes and every control route as JSON', async () => {
    const url = await mounted();
    const res = await request(url).get('/sandbox/_sandbox/').expect(200).expect('content-type', /json/);
    expect(res.body.credentials).toEqual({ clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET, sender: '15550000001' });
    expect((res.body.provider as Route[]).map((r) => r.path)).toEqual(['/sandbox/token', '/sandbox/messaging-bsp-api-endpoint-ws/services/v1/messaging', '/sandbox/services/messaging']);
    const control = res.body.control as Route[];
    expect(control.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining([
        'GET /sandbox/_sandbox/requests',
        'POST /sandbox/_sandbox/faults/fail',
        'POST /sandbox/_sandbox/faults/refuse-interactive',
        'POST /sandbox/_sandbox/deliver',
        'POST /sandbox/_sandbox/reset',
      ]),
    );
    await request(url).get('/sandbox/_sandbox').expect(200).expect('content-type', /json/);
  });

  it('lists only routes that exist, with example bodies they accept', async () => {
    const url = await mounted();
    const control = (await request(url).get('/sandbox/_sandbox/').expect(200)).body.control as Route[];
    for (const r of control) {
      const req = request(url)[r.method.toLowerCase() as 'get' | 'post' | 'delete'](r.path);
      const res = await (r.body === undefined ? req : req.send(r.body as object));
      // The deliver example is valid but this sandbox has no webhook to post it to.
      if (r.path.endsWith('/deliver')) expect(res.status, `${r.method} ${r.path}`).not.toBe(404);
      else expect(res.status, `${r.method} ${r.path}: ${JSON.stringify(res.body)}`).toBe(200);
    }
  });

  it('answers a browser with a small HTML page', async () => {
    const url = await mounted();
    const res = await request(url).get('/sandbox/_sandbox/').set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8').expect(200).expect('content-type', /html/);
    expect(res.text).toContain('<code>/sandbox/_sandbox/faults/fail</code>');
    expect(res.text).toContain(SANDBOX_CLIENT_SECRET);
  });
});
