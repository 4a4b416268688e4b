/**
 * The conformance kit run against the seed provider (`createHttpAdapter` and the sandbox), alone
 * and paced as the server paces it (`withPacing`): every check of the contract passes, or is
 * skipped for a feature the seed provider does not have.
 */
import { describe, it } from 'vitest';
import { describeProvider, type ProviderSetup, type TestRunner } from '../../src/simulator/testing.js';
import { withPacing } from '../../src/transport/index.js';
import { seedSetup } from './seed-upstream.js';

/**
 * A runner on which the named checks are expected to fail (`it.fails`): checks the provider fails
 * today, so that its fix turns this file red until the name is removed here.
 */
function expectingFailures(names: readonly string[]): TestRunner {
  const known = new Set(names);
  return {
    describe,
    it: Object.assign((name: string, body: (context?: unknown) => Promise<void>, timeout?: number) => (known.has(name) ? it.fails : it)(name, body, timeout), { skip: it.skip }),
  };
}

/** createHttpAdapter's close() rejects when called a second time: undici's ClientDestroyedError from an agent already closed. */
const CLOSE_TWICE = 'close() resolves, also a second time';
/** withPacing's send() rejects with an AbortError when its signal is aborted while it waits for the rate (the bucket's sleep). */
const ABORTED_WHILE_PACED = 'send() with an aborted signal resolves without throwing';

describeProvider('the seed provider (createHttpAdapter) against the sandbox', seedSetup, { runner: expectingFailures([CLOSE_TWICE]) });

/** One message a second, one at a time: a second send right after the first waits for the rate. */
const pacedSetup: ProviderSetup = async () => {
  const made = await seedSetup();
  return { ...made, provider: withPacing(made.provider, { perSecond: 1, burst: 1 }) };
};

describeProvider('the seed provider paced by withPacing', pacedSetup, { runner: expectingFailures([CLOSE_TWICE, ABORTED_WHILE_PACED]) });
