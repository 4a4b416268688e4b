/** Reading the body over a real socket (in pieces, chunked, gzip'd, cut short), and the 200 answer. */
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import express from 'express';
import { SANDBOX_SENDER, signBody, SIGNATURE_HEADER, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { createWebhookRouter } from '../../src/webhook/index.js';
import orderBot from '../fixtures/order-bot.js';
import { SECRET, USER, afterThisTest, closeServer, listen, stack } from './helpers.js';

/** Sends raw HTTP/1.1: the head, then each piece of the body after a pause; resolves with the status (0 when closed without an answer). */
function rawPost(url: string, headers: Record<string, string | number>, pieces: readonly Buffer[], o: { cut?: boolean } = {}): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    socket.on('connect', async () => {
      const head = Object.entries({ host: '127.0.0.1', connection: 'close', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
      socket.write(`POST /webhook HTTP/1.1\r\n${head.join('')}\r\n`);
      for (const p of pieces) {
        await new Promise((r) => setTimeout(r, 20));
        socket.write(p);
      }
      if (o.cut) socket.destroy();
    });
  });
}

const body = (text: string) => Buffer.from(JSON.stringify(webhookPayload({ messages: [textMessage({ from: USER, text, id: `wamid.${text}` })] })));
const signed = (raw: Buffer, extra: Record<string, string | number> = {}) => ({ 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(SECRET, raw.toString('utf8')), ...extra });

describe('reading a webhook body', () => {
  it('takes a body that arrives in pieces, as declared by Content-Length', async () => {
    const s = await stack({ bots: [orderBot] });
    const raw = body('pieces');
    const status = await rawPost(s.url, signed(raw, { 'content-length': raw.length }), [raw.subarray(0, 10), raw.subarray(10, 50), raw.subarray(50)]);
    expect(status).toBe(200);
    expect(s.count('inbox')).toBe(1);
    await s.runtime.idle();
  });

  it('takes a chunked body and a gzip-encoded one', async () => {
    const s = await stack({ bots: [orderBot] });
    const raw = body('chunked');
    const chunk = (b: Buffer) => Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
    expect(await rawPost(s.url, signed(raw, { 'transfer-encoding': 'chunked' }), [chunk(raw.subarray(0, 30)), chunk(raw.subarray(30)), Buffer.from('0\r\n\r\n')])).toBe(200);
    const zipped = body('gzip');
    const gz = gzipSync(zipped);
    expect(await rawPost(s.url, signed(zipped, { 'content-encoding': 'gzip', 'content-length': gz.length }), [gz])).toBe(200);
    expect(s.count('inbox')).toBe(2);
    await s.runtime.idle();
  });

  it('stores nothing from a body cut short, and counts it as unreadable', async () => {
    const s = await stack({ bots: [orderBot] });
    const raw = body('cut');
    expect(await rawPost(s.url, signed(raw, { 'content-length': raw.length }), [raw.subarray(0, 40)], { cut: true })).toBe(0);
    await expect.poll(() => s.runtime.metrics.value('colloquy_webhook_requests_total', { route: 'webhook', outcome: 'unreadable_body' })).toBe(1);
    expect(s.count('inbox')).toBe(0);
    // The next delivery, whole, is taken.
    expect(await rawPost(s.url, signed(raw, { 'content-length': raw.length }), [raw])).toBe(200);
    expect(s.count('inbox')).toBe(1);
    await s.runtime.idle();
  });
});

describe('the 200 answer', () => {
  it('is the JSON summary with its type and length', async () => {
    const s = await stack({ bots: [orderBot] });
    const r = await s.post('/webhook', JSON.parse(body('hello').toString()));
    expect(r.status).toBe(200);
    expect(r.text).toBe('{"ok":true,"received":1,"duplicates":0,"statuses":0}');
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('content-length')).toBe(String(Buffer.byteLength(r.text)));
    await s.runtime.idle();
  });

  it('follows the JSON settings of the application it is mounted in', async () => {
    const s = await stack({ bots: [orderBot] });
    const app = express();
    app.set('json spaces', 2);
    app.use(createWebhookRouter({ runtime: s.runtime, defaultSender: SANDBOX_SENDER, secret: SECRET }));
    const server = await listen(app);
    afterThisTest(() => closeServer(server));
    const raw = body('spaced');
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`, { method: 'POST', headers: signed(raw), body: raw });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(JSON.stringify({ ok: true, received: 1, duplicates: 0, statuses: 0 }, null, 2));
    await s.runtime.idle();
  });
});
