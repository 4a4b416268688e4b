/**
 * The webhook router inside an Express app you already have, beside your own routes, with the
 * runtime, store and send adapter built by hand. Posts one signed webhook to itself (as the
 * provider would), prints what the bot answered, and exits.
 *
 *   node --conditions=colloquy-source --import tsx examples/embed-express.ts
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { setup } from 'xstate';
import { defineBot, list, say, type ColloquyEvent, type Message } from 'colloquy';
import { Runtime, createHttpAdapter, createWebhookRouter, loadConfig } from 'colloquy/server';
import { openSqliteStore } from 'colloquy/sqlite';
import { renderSms } from 'colloquy/messages';
import { startSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, SIGNATURE_HEADER, signBody, textMessage, webhookPayload } from 'colloquy/sandbox';

const shop = defineBot({
  id: 'shop',
  machine: setup({ types: { events: {} as ColloquyEvent } }).createMachine({
    initial: 'menu',
    states: {
      menu: {
        entry: say(
          list({
            body: 'Hi! What are you after?',
            button: 'Browse',
            rows: [
              { id: 'shoes', title: 'Shoes' },
              { id: 'bags', title: 'Bags' },
            ],
          }),
        ),
      },
    },
  }),
});

// The real provider when COLLOQUY_BASE_URL (and friends) are set; otherwise a sandbox in-process.
const config = loadConfig();
const sandbox = config.provider.kind === 'sandbox' ? await startSandbox({ port: 0 }) : undefined;
const adapter = createHttpAdapter(
  config.provider.kind === 'real' ? config.provider : { baseUrl: sandbox!.url, authUrl: sandbox!.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET },
);
const sender = config.sender ?? SANDBOX_SENDER;
const secret = config.webhookSecret ?? 'example-app-secret';

const store = openSqliteStore(':memory:'); // a file path in production, e.g. ./data/colloquy.db
const runtime = new Runtime({ store, adapter, bots: [shop], sender });
await runtime.start(); // recovers pending work from the store, then accepts inbounds

const app = express();
app.get('/orders', (_req, res) => void res.json([{ id: 'A-1001', total: 42 }])); // your own routes
// Before any global express.json(): the signature is checked over the raw request bytes.
app.use(createWebhookRouter({ runtime, defaultSender: sender, secret }));
const server = app.listen(0, '127.0.0.1');
await once(server, 'listening');
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

console.log(`GET /orders → ${await (await fetch(`${url}/orders`)).text()}`);

// What the provider posts when a user writes "hi" (the Cloud API envelope), signed with the app secret.
const user = process.env['EXAMPLE_TO'] ?? '5215512345678'; // with a real provider, a number you own
const body = JSON.stringify(webhookPayload({ displayPhoneNumber: sender, messages: [textMessage({ from: user, text: 'hi' })] }));
const res = await fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signBody(secret, body) }, body });
console.log(`POST /webhook → ${res.status} ${await res.text()}`); // 200 once the inbound is committed

await runtime.idle(); // the turn runs after the 200; wait for it and its sends
for (const e of await runtime.transcript({ botId: 'shop', user })) {
  if (e.direction !== 'out') continue; // the transcript holds both directions; print the bot's side
  const asText = renderSms(e.record.message as Message, { hint: '' }).replace(/^(?=.)/gm, '  ');
  console.log(`bot → ${user}: ${e.record.kind} by ${e.record.channel}, ${e.record.state}\n${asText}`);
}

server.closeAllConnections();
server.close();
await runtime.stop(); // finishes turns in flight and flushes their sends
await adapter.close();
await store.close();
await sandbox?.close();
