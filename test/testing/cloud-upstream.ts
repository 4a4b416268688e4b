/**
 * The Cloud API provider under the conformance kit: `createCloudApiProvider` pointed at the
 * sandbox's Cloud API mode on its own HTTP server (port 0), the sandbox's faults as the upstream's
 * control surface, the seed's SMS interface of the same sandbox as its SMS channel. The user has
 * written (a webhook receiver on loopback takes the sandbox's deliveries), so the window is open.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SANDBOX_CLOUD_API_TOKEN, SANDBOX_CLOUD_API_VERSION, startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import type { ProviderUnderTest, ProviderUpstream, UpstreamOutcome } from '../../src/simulator/testing.js';
import { createCloudApiProvider, createHttpAdapter, type Clock } from '../../src/transport/index.js';

const USER = '15550000002';
const NUMBER_ID = '100000000000001';
const ALWAYS = 100;

/** A clock whose sleeps pass at once and move its time on: pauses for 130429 or 131056 cost no real time. */
function skippingClock(): Clock {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    sleep: async (ms) => {
      offset += Math.max(0, ms);
    },
  };
}

async function receiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function cloudUpstream(running: RunningSandbox, hook: { close(): Promise<void> }): ProviderUpstream {
  const { sandbox } = running;
  let up = true;
  const codes: Partial<Record<UpstreamOutcome, number>> = { throughput: 130429, 'pair-rate': 131056, window: 131047, undeliverable: 131026, invalid: 131009 };
  return {
    answer: async (outcome) => {
      sandbox.clearFaults();
      const code = codes[outcome];
      if (code !== undefined) sandbox.faults.cloudError(code, { times: ALWAYS });
      if (outcome === 'transient') sandbox.faults.cloudError(131000, { times: 1 });
      if (outcome === 'auth') sandbox.faults.cloudError(190, { times: ALWAYS });
      if (outcome === 'down' && up) {
        up = false;
        await running.close();
      }
    },
    received: () => sandbox.messages,
    close: async () => {
      if (up) await running.close();
      up = false;
      await hook.close();
    },
  };
}

/** A fresh sandbox in Cloud API mode, a user who wrote, and a Cloud API provider pointed at it. */
export async function cloudSetup(): Promise<ProviderUnderTest> {
  const hook = await receiver();
  const running = await startSandbox({ phoneNumberId: NUMBER_ID, webhook: { url: hook.url }, cloudApi: { statuses: false } });
  await running.sandbox.deliver.text(USER, 'hi');
  const base = running.url;
  const provider = createCloudApiProvider({
    baseUrl: `${base}/cloud/${SANDBOX_CLOUD_API_VERSION}`,
    token: SANDBOX_CLOUD_API_TOKEN,
    defaultNumberId: NUMBER_ID,
    clock: skippingClock(),
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    sms: createHttpAdapter({ baseUrl: base, authUrl: base, clientId: running.sandbox.clientId, clientSecret: running.sandbox.clientSecret, retry: { baseDelayMs: 1, maxDelayMs: 5 } }),
  });
  return {
    provider,
    upstream: cloudUpstream(running, hook),
    address: { from: running.sandbox.sender, to: USER },
    numberId: NUMBER_ID,
    secrets: [SANDBOX_CLOUD_API_TOKEN, running.sandbox.clientSecret],
  };
}
