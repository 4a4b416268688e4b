import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decryptFlowRequest, encryptFlowResponse, FlowDecryptError } from '../../src/flows/crypto.js';
import { loadFlowPrivateKey } from '../../src/flows/keys.js';
import { verifyFlowSignature } from '../../src/flows/signature.js';
import { FlowClient, FlowResponseError } from '../../src/simulator/testing.js';
import { decryptRequest, encryptResponse } from '../fixtures/flows/meta-encryption.mjs';

const dir = join(import.meta.dirname, '../fixtures/flows');
const { passphrase } = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8')) as { passphrase: string };
const privatePem = readFileSync(join(dir, 'test-private-key.pem'), 'utf8');
const publicKey = readFileSync(join(dir, 'test-public-key.pem'), 'utf8');
const privateKey = loadFlowPrivateKey(join(dir, 'test-private-key.pem'), passphrase);
const APP_SECRET = 'app-secret-for-this-test';

type Handler = (raw: string, headers: IncomingHttpHeaders) => { status: number; body: string };

/** What the endpoint saw, request by request. */
const seen: { payload: unknown; aesKey: string; iv: string; contentType: string | undefined }[] = [];

/** An endpoint written with src/flows/crypto.ts: 432, 421, then an answer by action. */
const ours: Handler = (raw, headers) => {
  if (!verifyFlowSignature(raw, headers['x-hub-signature-256'] as string | undefined, [APP_SECRET])) return { status: 432, body: '' };
  let request;
  try {
    request = decryptFlowRequest(JSON.parse(raw), privateKey);
  } catch (err) {
    if (err instanceof FlowDecryptError) return { status: 421, body: '' };
    throw err;
  }
  const payload = request.payload as { action: string; flow_token?: string; screen?: string; data?: Record<string, unknown> };
  seen.push({ payload, aesKey: request.aesKey.toString('hex'), iv: request.iv.toString('hex'), contentType: headers['content-type'] });
  const answer = (status: number, reply: unknown) => ({ status, body: encryptFlowResponse(reply, request.aesKey, request.iv) });
  if (payload.action === 'ping') return answer(200, { data: { status: 'active' } });
  if (payload.flow_token === 'expired') return answer(427, { error_msg: 'This booking has expired' });
  if (payload.action === 'INIT') return answer(200, { screen: 'DAYS', data: { days: ['mon', 'tue'], given: payload.data ?? null } });
  if (payload.action === 'BACK') return answer(200, { screen: payload.screen, data: {} });
  return answer(200, { screen: 'SUCCESS', data: { extension_message_response: { params: { flow_token: payload.flow_token, echo: payload.data } } } });
};

/** Meta's sample's server side, unchanged: its decryptRequest and its encryptResponse. */
const metas: Handler = (raw) => {
  const { decryptedBody, aesKeyBuffer, initialVectorBuffer } = decryptRequest(JSON.parse(raw), privatePem, passphrase);
  seen.push({ payload: decryptedBody, aesKey: aesKeyBuffer.toString('hex'), iv: initialVectorBuffer.toString('hex'), contentType: undefined });
  return { status: 200, body: encryptResponse({ screen: 'MY_SCREEN', data: { greeting: 'Hey there! 👋' } }, aesKeyBuffer, initialVectorBuffer) };
};

let handler: Handler = ours;
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { status, body } = handler(Buffer.concat(chunks).toString('utf8'), req.headers);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/flows`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
  handler = ours;
});

describe('FlowClient', () => {
  it('pings, opens, goes back and submits, each answer decrypted with the inverted IV', async () => {
    const client = new FlowClient({ url, publicKey, appSecret: APP_SECRET });
    expect(await client.ping()).toMatchObject({ status: 200, body: { data: { status: 'active' } } });
    expect((await client.init('tok-1', { from: 'menu' })).body).toEqual({ screen: 'DAYS', data: { days: ['mon', 'tue'], given: { from: 'menu' } } });
    expect((await client.back('tok-1', 'DAYS')).body).toEqual({ screen: 'DAYS', data: {} });
    const done = await client.submit('tok-1', 'DAYS', { day: 'mon' });
    expect(done.body).toEqual({ screen: 'SUCCESS', data: { extension_message_response: { params: { flow_token: 'tok-1', echo: { day: 'mon' } } } } });
    expect(Buffer.from(done.raw, 'base64').toString('base64')).toBe(done.raw);
    expect(seen.map((s) => s.payload)).toEqual([
      { version: '3.0', action: 'ping' },
      { version: '3.0', action: 'INIT', flow_token: 'tok-1', data: { from: 'menu' } },
      { version: '3.0', action: 'BACK', screen: 'DAYS', flow_token: 'tok-1' },
      { version: '3.0', action: 'data_exchange', screen: 'DAYS', data: { day: 'mon' }, flow_token: 'tok-1' },
    ]);
    expect(seen.every((s) => s.contentType === 'application/json')).toBe(true);
    expect(new Set(seen.map((s) => s.aesKey)).size).toBe(4);
    expect(new Set(seen.map((s) => s.iv)).size).toBe(4);
  });

  it('replays the same payload with a new AES key and IV', async () => {
    const client = new FlowClient({ url, publicKey, appSecret: APP_SECRET });
    await expect(client.replay()).rejects.toThrow(/nothing has been sent yet/);
    const first = await client.submit('tok-2', 'SLOTS', { slot: '10:00' });
    const again = await client.replay();
    expect(again.body).toEqual(first.body);
    expect(again.raw).not.toBe(first.raw);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.payload).toEqual(seen[0]!.payload);
    expect(seen[1]!.aesKey).not.toBe(seen[0]!.aesKey);
    expect(seen[1]!.iv).not.toBe(seen[0]!.iv);
  });

  it("is read by Meta's own decryptRequest, and reads Meta's encryptResponse", async () => {
    handler = metas;
    const client = new FlowClient({ url, publicKey });
    const res = await client.init('tok-3');
    expect(res).toMatchObject({ status: 200, body: { screen: 'MY_SCREEN', data: { greeting: 'Hey there! 👋' } } });
    expect(seen[0]!.payload).toEqual({ version: '3.0', action: 'INIT', flow_token: 'tok-3' });
  });

  it('gets 432 without a signature or with the wrong secret, and 421 for a key the endpoint does not hold', async () => {
    const client = new FlowClient({ url, publicKey, appSecret: APP_SECRET });
    expect(await client.ping({ appSecret: null })).toEqual({ status: 432, body: undefined, raw: '' });
    expect((await client.ping({ appSecret: 'not-the-app-secret' })).status).toBe(432);
    expect((await new FlowClient({ url, publicKey }).ping()).status).toBe(432);
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect(await client.ping({ publicKey: stranger })).toEqual({ status: 421, body: undefined, raw: '' });
    expect((await client.replay()).status).toBe(421);
    expect(seen).toEqual([]);
  });

  it("decrypts a 427's message, and refuses a 200 that does not decrypt", async () => {
    const client = new FlowClient({ url, publicKey, appSecret: APP_SECRET });
    expect(await client.init('expired')).toMatchObject({ status: 427, body: { error_msg: 'This booking has expired' } });
    handler = () => ({ status: 200, body: Buffer.from('not the answer, not under this key').toString('base64') });
    await expect(client.ping()).rejects.toThrow(FlowResponseError);
    handler = () => ({ status: 200, body: '' });
    await expect(client.ping()).rejects.toThrow(/does not decrypt under the request's key and inverted IV/);
  });
});
