/**
 * Throughput of the send adapter against a minimal local provider, beside a bare undici POST loop
 * (same server, same concurrency, token fetched once) measured in the same run.
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
// The baseline is the bare client the adapter is built on; this is the one place outside
// src/transport that imports undici, to measure the adapter's overhead over it.
import { Agent } from 'undici';
import { createHttpAdapter, MESSAGING_PATH, type Outbound } from '../src/transport/index.js';

/** Settings of {@link benchTransport}. */
export interface BenchTransportOptions {
  /** Messages per measured run (default 20,000). */
  readonly messages?: number;
  /** Sends in flight at once (default 64). */
  readonly concurrency?: number;
  /** Connections per origin, for both clients (default: the concurrency). */
  readonly connections?: number;
  /** Measured runs of each client, alternated (default 3); the best of each is reported. */
  readonly rounds?: number;
}

// Runs in a worker thread so that the provider does not share the event loop with the clients.
const SERVER = `
const { createServer } = require('node:http');
const { parentPort } = require('node:worker_threads');
let tokens = 0, messages = 0;
const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/auth/token') { tokens++; res.end(JSON.stringify({ access_token: 'bench-token-' + tokens, token_type: 'Bearer', expires_in: 600 })); return; }
    messages++;
    res.end(JSON.stringify({ id: 'wamid.' + messages }));
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'stats') parentPort.postMessage({ tokens, messages });
  if (m === 'close') server.close(() => process.exit(0));
});
`;

interface Provider {
  readonly url: string;
  stats(): Promise<{ tokens: number; messages: number }>;
  close(): Promise<void>;
}

async function startProvider(): Promise<Provider> {
  const worker = new Worker(SERVER, { eval: true });
  const next = <T>() => new Promise<T>((resolve) => worker.once('message', resolve));
  const { port } = await next<{ port: number }>();
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => {
      const p = next<{ tokens: number; messages: number }>();
      worker.postMessage('stats');
      return p;
    },
    close: async () => {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.postMessage('close');
      await exited;
    },
  };
}

const outbound: Outbound = {
  channel: 'interactive',
  request: {
    from: '5215500000000',
    to: '5215511111111',
    type: 'interactive',
    replyButtons: {
      body: 'Which size?',
      footer: 'Colloquy',
      buttons: [
        { id: '1', title: 'Small' },
        { id: '2', title: 'Medium' },
        { id: '3', title: 'Large' },
      ],
    },
  },
};

/** Runs `total` calls of `one`, `concurrency` at a time; returns messages per second. */
async function drive(total: number, concurrency: number, one: () => Promise<boolean>): Promise<number> {
  let next = 0;
  let failures = 0;
  const started = performance.now();
  const worker = async () => {
    while (next++ < total) if (!(await one())) failures++;
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  if (failures > 0) throw new Error(`${failures} of ${total} sends failed during the benchmark`);
  return total / seconds;
}

/** The baseline: undici POSTs with a token fetched once. */
async function baselineClient(url: string, connections: number) {
  const agent = new Agent({ connections, keepAliveTimeout: 30_000 });
  const tokenRes = await agent.request({
    origin: url,
    path: '/auth/token',
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=bench&client_secret=bench',
  });
  const { access_token: token } = (await tokenRes.body.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const one = async () => {
    const res = await agent.request({ origin: url, path: MESSAGING_PATH, method: 'POST', headers, body: JSON.stringify(outbound.request) });
    await res.body.text();
    return res.statusCode >= 200 && res.statusCode < 300;
  };
  return { one, close: () => agent.close() };
}

/**
 * Measures messages/s through `createHttpAdapter` and through a bare undici loop against the same
 * local provider. Returns `adapter_msgs_per_s`, `baseline_msgs_per_s`, `ratio` (adapter ÷
 * baseline), `adapter_token_requests` and the settings used.
 */
export async function benchTransport(opts: BenchTransportOptions = {}): Promise<Record<string, number>> {
  const messages = opts.messages ?? 20_000;
  const concurrency = opts.concurrency ?? 64;
  const connections = opts.connections ?? concurrency;
  const rounds = opts.rounds ?? 3;
  const provider = await startProvider();
  const adapter = createHttpAdapter({ baseUrl: provider.url, authUrl: `${provider.url}/auth`, clientId: 'bench', clientSecret: 'bench', connections });
  const baseline = await baselineClient(provider.url, connections);
  const viaAdapter = async () => (await adapter.send(outbound)).ok;
  try {
    const tokensBefore = (await provider.stats()).tokens;
    await drive(Math.min(2_000, messages), concurrency, viaAdapter);
    await drive(Math.min(2_000, messages), concurrency, baseline.one);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < rounds; i++) {
      b.push(await drive(messages, concurrency, baseline.one));
      a.push(await drive(messages, concurrency, viaAdapter));
    }
    const adapterRate = Math.max(...a);
    const baselineRate = Math.max(...b);
    return {
      adapter_msgs_per_s: Math.round(adapterRate),
      baseline_msgs_per_s: Math.round(baselineRate),
      ratio: Math.round((adapterRate / baselineRate) * 1000) / 1000,
      adapter_token_requests: (await provider.stats()).tokens - tokensBefore,
      messages_per_run: messages,
      rounds,
      concurrency,
      connections,
    };
  } finally {
    await adapter.close();
    await baseline.close();
    await provider.close();
  }
}
