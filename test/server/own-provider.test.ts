/**
 * A provider of one's own, handed to `startServer`: it carries every bot's messages (built by its
 * own `request()`, text included when its features say so), and no sandbox is started.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { loadConfig } from '../../src/config.js';
import { defineBot, say, text } from '../../src/index.js';
import type { Message } from '../../src/messages/message.js';
import { signBody, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { Provider, ProviderAddress } from '../../src/transport/index.js';
import { eventually } from '../support/eventually.js';

let server: RunningServer | undefined;
let relay: Server | undefined;
afterEach(async () => {
  await server?.close();
  await new Promise((resolve) => (relay ? relay.close(resolve) : resolve(undefined)));
  server = undefined;
  relay = undefined;
});

/** A relay on loopback that records what it is given. */
async function startRelay(): Promise<{ url: string; got: unknown[] }> {
  const got: unknown[] = [];
  relay = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      got.push(JSON.parse(body));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `relay-${got.length}` }));
    });
  });
  await new Promise<void>((resolve) => relay!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`, got };
}

/** The smallest honest provider: text and nothing else, one POST per message. */
function relayProvider(url: string): Provider {
  return {
    name: 'relay',
    features: { text: true, templates: false, window: false, readReceipts: false, sms: false },
    request: (m: Message, a: ProviderAddress) => ({ to: a.to, kind: m.kind, body: m.kind === 'text' ? m.text : undefined }),
    async send(o) {
      try {
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(o.request) });
        const body = (await res.json()) as { id: string };
        return { ok: true, channel: o.channel, status: res.status, providerId: body.id, raw: body, attempts: 1 };
      } catch (err) {
        return { ok: false, channel: o.channel, kind: 'retryable', reason: String(err), attempts: 1 };
      }
    },
    close: async () => undefined,
  };
}

describe('startServer with a provider of one’s own', () => {
  it('sends every message through it, text as its own kind, and starts no sandbox', async () => {
    const machine = setup({}).createMachine({ id: 'echo', initial: 'idle', states: { idle: { on: { text: { actions: say(text('Hello from the relay')) } } } } });
    const bot = defineBot({ id: 'echo', machine, options: { sender: '15550001234' } });
    const r = await startRelay();
    server = await startServer({ bots: [bot], config: { ...loadConfig({}), db: ':memory:', port: 0, webhookSecret: 's3cret' }, provider: relayProvider(r.url) });
    expect(server.sandbox).toBeUndefined();
    expect((await fetch(`${server.url}/sandbox/_sandbox/`)).status).toBe(404);
    const body = JSON.stringify(webhookPayload({ messages: [textMessage({ from: '5215500009999', text: 'hi' }) as never], displayPhoneNumber: '15550001234' }));
    const res = await fetch(`${server.url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody('s3cret', body) }, body });
    expect(res.status).toBe(200);
    await eventually(() => expect(r.got).toEqual([{ to: '5215500009999', kind: 'text', body: 'Hello from the relay' }]));
    const conv = (await server.store.conversations({ botId: 'echo' }))[0]!;
    const out = (await server.store.transcript(conv.id)).filter((e) => e.direction === 'out');
    expect(out.map((e) => (e.direction === 'out' ? [e.record.channel, e.record.state, e.record.providerId] : []))).toEqual([['interactive', 'sent', 'relay-1']]);
  });
});
