/**
 * A server process for the crash tests: a runtime on the database at argv[2] (a SQLite path or a
 * PostgreSQL URL) and the sandbox at argv[3].
 * Reads inbounds as JSON lines on stdin and acknowledges each, synchronously, once committed.
 */
import { writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Runtime, createHttpAdapter } from '../../src/entries/server.js';
import { openStore } from '../../src/store/open.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER } from '../../src/sandbox/index.js';
import counterBot from '../fixtures/counter-bot.js';

const [, , dbPath, sandboxUrl] = process.argv;
const store = await openStore(dbPath!);
const adapter = createHttpAdapter({ baseUrl: sandboxUrl!, authUrl: sandboxUrl!, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET });
const runtime = new Runtime({
  store,
  adapter,
  bots: [counterBot],
  sender: SANDBOX_SENDER,
  work: { leaseMs: Number(process.env['LEASE_MS'] ?? 10_000) },
});
await runtime.start();
writeSync(1, 'ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  const m = JSON.parse(line) as { id: string; user: string; text: string };
  await runtime.receive({ botId: 'counter', user: m.user, providerId: m.id, source: 'whatsapp', event: { type: 'text', text: m.text } });
  writeSync(1, `committed ${m.id}\n`);
}
