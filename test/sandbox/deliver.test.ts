import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { ColloquyError, ConfigError } from '../../src/errors.js';
import { SANDBOX_PATHS, SANDBOX_SENDER, smsUrlOf, verifySignature } from '../../src/sandbox/index.js';
import { TO, fakeClock, listRequest, postMessage, start } from './helpers.js';

interface Received {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly raw: string;
  readonly json: any;
}

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** A webhook on 127.0.0.1 that records what it receives and answers `status`. */
async function webhook(status = 200): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      received.push({ path: req.url ?? '', headers: req.headers, raw, json: JSON.parse(raw) });
      res.statusCode = status;
      res.end('ok');
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`, received };
}

function firstMessage(r: Received | undefined): any {
  return r?.json.entry[0].changes[0].value.messages[0];
}

describe('deliver', () => {
  it('posts a signed text message in the Cloud API envelope', async () => {
    const hook = await webhook();
    const clock = fakeClock();
    const { sandbox } = await start({ clock, webhook: { url: hook.url, secret: 'shh' } });
    const result = await sandbox.deliver.text(TO, 'hola', { name: 'Ana' });
    expect(result).toMatchObject({ status: 200, ok: true, body: 'ok', url: hook.url });
    const got = hook.received[0]!;
    expect(got.path).toBe('/webhook');
    expect(got.headers['content-type']).toBe('application/json');
    expect(verifySignature('shh', got.raw, got.headers['x-hub-signature-256'] as string)).toBe(true);
    expect(got.json).toEqual(result.payload);
    expect(got.json.entry[0].changes[0].value.contacts).toEqual([{ profile: { name: 'Ana' }, wa_id: TO }]);
    expect(firstMessage(got)).toMatchObject({ from: TO, type: 'text', text: { body: 'hola' }, timestamp: String(Math.floor(clock.now() / 1000)) });
  });

  it('does not sign without a secret', async () => {
    const hook = await webhook();
    const { sandbox } = await start({ webhook: { url: hook.url } });
    await sandbox.deliver.text(TO, 'hi');
    expect(hook.received[0]?.headers['x-hub-signature-256']).toBeUndefined();
  });

  it('gives taps the context of the last interactive message sent to the user', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ webhook: { url: hook.url } });
    const sent = await postMessage(url, sandbox.issueToken(), listRequest).expect(200);
    await sandbox.deliver.listReply(TO, { id: '3', title: 'Pizza 3' });
    await sandbox.deliver.buttonReply(TO, { id: '1', title: 'Small' }, { context: { from: SANDBOX_SENDER, id: 'wamid.old' } });
    await sandbox.deliver.flowReply(TO, { flowToken: 'FLOW_TOKEN_abc', data: { product_name: 'Margherita' } });
    const [list, button, flow] = hook.received.map(firstMessage);
    expect(list.context).toEqual({ from: SANDBOX_SENDER, id: sent.body.messages[0].id });
    expect(list.interactive).toEqual({ type: 'list_reply', list_reply: { id: '3', title: 'Pizza 3' } });
    expect(button.context.id).toBe('wamid.old');
    expect(JSON.parse(flow.interactive.nfm_reply.response_json)).toEqual({ flow_token: 'FLOW_TOKEN_abc', product_name: 'Margherita' });
  });

  it('posts statuses for a sent message, finding its recipient', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ webhook: { url: hook.url } });
    const sent = await postMessage(url, sandbox.issueToken(), listRequest).expect(200);
    const id = sent.body.messages[0].id as string;
    for (const s of ['sent', 'delivered', 'read', 'failed'] as const) await sandbox.deliver.status(id, s);
    const statuses = hook.received.map((r) => r.json.entry[0].changes[0].value.statuses[0]);
    expect(statuses.map((s) => [s.id, s.status, s.recipient_id])).toEqual([
      [id, 'sent', TO],
      [id, 'delivered', TO],
      [id, 'read', TO],
      [id, 'failed', TO],
    ]);
    expect(statuses[3].errors[0].code).toBe(131047);
    await expect(sandbox.deliver.status('wamid.unknown', 'read')).rejects.toThrow(ConfigError);
  });

  it('posts an image and an inbound SMS to the SMS webhook', async () => {
    const hook = await webhook();
    const { sandbox } = await start({ webhook: { url: hook.url, secret: 'k' } });
    await sandbox.deliver.image(TO, { caption: 'look' });
    await sandbox.deliver.sms(TO, 'SI');
    expect(firstMessage(hook.received[0]).type).toBe('image');
    const sms = hook.received[1]!;
    expect(sms.path).toBe('/webhook/sms');
    expect(sms.json).toEqual({ id: expect.any(String), from: TO, to: SANDBOX_SENDER, text: 'SI', timestamp: expect.stringMatching(/^\d+$/) });
    expect(verifySignature('k', sms.raw, sms.headers['x-hub-signature-256'] as string)).toBe(true);
  });

  it('reports the webhook status without throwing', async () => {
    const hook = await webhook(401);
    const { sandbox } = await start({ webhook: { url: hook.url } });
    expect(await sandbox.deliver.text(TO, 'x')).toMatchObject({ status: 401, ok: false });
  });

  it('fails clearly without a webhook or when it cannot connect', async () => {
    const { sandbox } = await start();
    await expect(sandbox.deliver.text(TO, 'x')).rejects.toThrow(ConfigError);
    expect(() => sandbox.setWebhook({ url: 'not a url' })).toThrow(ConfigError);
    const hook = await webhook();
    servers[0]!.close();
    servers[0]!.closeAllConnections();
    sandbox.setWebhook({ url: hook.url });
    await expect(sandbox.deliver.text(TO, 'x')).rejects.toThrow(ColloquyError);
  });

  it('delivers over the control route', async () => {
    const hook = await webhook();
    const { url } = await start({ webhook: { url: hook.url } });
    const res = await request(url).post(`${SANDBOX_PATHS.control}/deliver`).send({ kind: 'button_reply', from: TO, buttonId: 'b1', title: 'Yes' }).expect(200);
    expect(res.body).toMatchObject({ status: 200, ok: true });
    expect(firstMessage(hook.received[0]).interactive.button_reply).toEqual({ id: 'b1', title: 'Yes' });
    await request(url).post(`${SANDBOX_PATHS.control}/deliver`).send({ kind: 'sms', from: TO, text: 'hi' }).expect(200);
    expect(hook.received[1]?.path).toBe('/webhook/sms');
    await request(url).post(`${SANDBOX_PATHS.control}/deliver`).send({ kind: 'telegram' }).expect(400);
  });

  it('derives the SMS webhook from the webhook', () => {
    expect(smsUrlOf('http://127.0.0.1:3000/webhook/')).toBe('http://127.0.0.1:3000/webhook/sms');
  });
});
