/**
 * The seed provider under the conformance kit: `createHttpAdapter` pointed at the sandbox on its own
 * HTTP server (port 0), the sandbox's faults as the upstream's control surface.
 */
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import type { ProviderUnderTest, ProviderUpstream, UpstreamOutcome } from '../../src/simulator/testing.js';
import { createHttpAdapter } from '../../src/transport/index.js';

/** The user the kit writes to (its default address). */
export const USER = '15550000002';

/** Enough failures for every attempt of one send. */
const ALWAYS = 100;

/** The sandbox answering as `outcome` says. */
export function sandboxUpstream(running: RunningSandbox): ProviderUpstream {
  const { sandbox } = running;
  let up = true;
  const answer = async (outcome: UpstreamOutcome): Promise<void> => {
    sandbox.clearFaults();
    const f = sandbox.faults;
    if (outcome === 'throughput') f.rateLimit('messaging', { retryAfter: 0, times: ALWAYS, body: { error: { code: 130429, message: '(#130429) Rate limit hit' } } });
    if (outcome === 'pair-rate') f.fail('messaging', { status: 400, times: ALWAYS, body: { error: { code: 131056, message: '(#131056) Pair rate limit hit' } } });
    if (outcome === 'window') f.refuseInteractive(USER);
    if (outcome === 'undeliverable') f.refuseInteractive(USER, { code: 131026, message: 'Message undeliverable' });
    if (outcome === 'invalid') f.fail('messaging', { status: 400, times: ALWAYS, body: { error: { code: 100, message: '(#100) Invalid parameter' } } });
    if (outcome === 'transient') f.fail('messaging', { status: 503, times: 1 });
    if (outcome === 'auth') {
      f.fail('token', { status: 401, times: ALWAYS });
      sandbox.expireTokens();
    }
    if (outcome === 'down' && up) {
      up = false;
      await running.close();
    }
  };
  return {
    answer,
    received: () => sandbox.messages,
    close: async () => {
      if (up) await running.close();
      up = false;
    },
  };
}

/** A fresh sandbox and a seed provider pointed at it, with quick retries. */
export async function seedSetup(): Promise<ProviderUnderTest> {
  const running = await startSandbox();
  const { sandbox } = running;
  const provider = createHttpAdapter({
    baseUrl: running.url,
    authUrl: running.url,
    clientId: sandbox.clientId,
    clientSecret: sandbox.clientSecret,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
  });
  return { provider, upstream: sandboxUpstream(running), address: { from: sandbox.sender, to: USER }, secrets: [sandbox.clientSecret] };
}
