/**
 * Tokens revoked while sends are in flight (the sandbox refusing a token twice within one send, or
 * expiring every token twice during a burst): each refusal refreshes the token once for everyone,
 * and no message is lost to a second refusal.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { createHttpAdapter, type SendAdapter, type TransportEvent } from '../../src/transport/index.js';
import { interactive } from './helpers.js';

let sb: RunningSandbox;
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sb.close();
});
beforeEach(() => sb.sandbox.reset());

function adapter(onEvent?: (e: TransportEvent) => void): SendAdapter {
  return createHttpAdapter({
    baseUrl: sb.url,
    authUrl: sb.url,
    clientId: SANDBOX_CLIENT_ID,
    clientSecret: SANDBOX_CLIENT_SECRET,
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    onEvent,
  });
}

const message = interactive;

describe('a token refused again within one send', () => {
  it('two refusals in a row: the send refreshes twice and gets through', async () => {
    sb.sandbox.faults.fail('messaging', { status: 401, times: 2 });
    const a = adapter();
    try {
      const r = await a.send(message);
      expect(r).toMatchObject({ ok: true, attempts: 3 });
      expect(sb.sandbox.tokensIssued()).toBe(3);
    } finally {
      await a.close();
    }
  });

  it('a burst of 300 with two revocations loses nothing, and refreshes once per revocation, not once per send', async () => {
    let sent = 0;
    const a = adapter((e) => {
      if (e.type !== 'send') return;
      sent++;
      if (sent === 60 || sent === 140) sb.sandbox.expireTokens();
    });
    try {
      const results = await Promise.all(Array.from({ length: 300 }, () => a.send(message)));
      expect(results.filter((r) => !r.ok)).toEqual([]);
      // A few: a send that fetched a token just before a revocation refreshes again; one per send would be hundreds.
      expect(sb.sandbox.tokensIssued()).toBeLessThanOrEqual(8);
    } finally {
      await a.close();
    }
  });
});
