/** The router inside an existing app; logs and failures of the runtime behind it. */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../../src/log.js';
import { SANDBOX_SENDER, signBody, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { createWebhookRouter } from '../../src/webhook/index.js';
import orderBot from '../fixtures/order-bot.js';
import { SECRET, USER, afterThisTest, closeServer, codeOf, listen, stack } from './helpers.js';

async function serve(app: express.Express): Promise<string> {
  const server = await listen(app);
  afterThisTest(() => closeServer(server));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function postTo(url: string, body: unknown): Promise<Response> {
  const raw = JSON.stringify(body);
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(SECRET, raw) }, body: raw });
}

const hello = () => webhookPayload({ messages: [textMessage({ from: USER, text: 'hi' })] });

describe('mounted in an existing app', () => {
  it('serves its routes and leaves the app’s own routes and body parser alone', async () => {
    const s = await stack({ bots: [orderBot] });
    const app = express();
    app.use(createWebhookRouter({ runtime: s.runtime, defaultSender: SANDBOX_SENDER, secret: SECRET }));
    app.use(express.json());
    app.post('/api/echo', (req, res) => void res.json({ echoed: req.body as unknown }));
    app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(599).json({ app: String(err) }));
    const url = await serve(app);
    expect((await postTo(`${url}/webhook`, hello())).status).toBe(200);
    const echo = await postTo(`${url}/api/echo`, { a: 1 });
    expect(await echo.json()).toEqual({ echoed: { a: 1 } });
    const broken = await fetch(`${url}/api/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(broken.status).toBe(599); // the app's own error handler, not the webhook's
    await s.runtime.idle();
  });

  it('uses req.rawBody when the app parsed JSON first and kept the raw bytes', async () => {
    const s = await stack({ bots: [orderBot] });
    const app = express();
    app.use(express.json({ verify: (req, _res, buf) => void ((req as unknown as { rawBody: Buffer }).rawBody = buf) }));
    app.use(createWebhookRouter({ runtime: s.runtime, defaultSender: SANDBOX_SENDER, secret: SECRET }));
    const url = await serve(app);
    expect((await postTo(`${url}/webhook`, hello())).status).toBe(200);
    await s.runtime.idle();
  });

  it('says so when a body parser ran first and kept no raw bytes', async () => {
    const s = await stack({ bots: [orderBot] });
    const app = express();
    app.use(express.json());
    app.use(createWebhookRouter({ runtime: s.runtime, defaultSender: SANDBOX_SENDER, secret: SECRET }));
    const url = await serve(app);
    const r = await postTo(`${url}/webhook`, hello());
    expect(r.status).toBe(500);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('body_already_parsed');
    expect(s.count('inbox')).toBe(0);
  });
});

describe('the runtime behind it', () => {
  it('answers 503 when the runtime is not accepting messages, so the provider delivers again', async () => {
    const s = await stack({ bots: [orderBot] });
    await s.runtime.stop();
    const r = await s.post('/webhook', hello());
    expect(r.status).toBe(503);
    expect(codeOf(r)).toBe('unavailable');
    expect(r.headers.get('retry-after')).toBe('5');
    expect(s.count('inbox')).toBe(0);
  });

  it('logs refusals with their reason, never the secret or the signature', async () => {
    const lines: string[] = [];
    const log = (obj: object, msg?: string) => void lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
    const logger: Logger = { debug: log, info: log, warn: log, error: log };
    const s = await stack({ bots: [orderBot], logger });
    const raw = JSON.stringify(hello());
    const forged = signBody('forged-secret', raw);
    expect((await s.post('/webhook', raw, { signature: forged })).status).toBe(401);
    expect((await s.post('/webhook', raw)).status).toBe(200);
    await s.runtime.idle();
    const all = lines.join('\n');
    expect(all).toContain('signature_invalid');
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(forged.slice(7));
    expect(all).not.toContain(signBody(SECRET, raw).slice(7));
  });
});
