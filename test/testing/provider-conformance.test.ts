/**
 * The conformance kit run against the two built-in providers: the seed provider (`createHttpAdapter`
 * and the sandbox), alone and paced as the server paces it (`withPacing`), and the Cloud API
 * (`createCloudApiProvider` and the sandbox's Cloud API mode). Every check of the contract passes,
 * or is skipped for a feature the provider does not have.
 */
import { describe, it } from 'vitest';
import { describeProvider, type ProviderSetup } from '../../src/simulator/testing.js';
import { cloudSetup } from './cloud-upstream.js';
import { withPacing } from '../../src/transport/index.js';
import { template } from '../../src/messages/index.js';
import { seedSetup } from './seed-upstream.js';

describeProvider('the seed provider (createHttpAdapter) against the sandbox', seedSetup, { runner: { describe, it } });

/** One message a second, one at a time: a second send right after the first waits for the rate. */
const pacedSetup: ProviderSetup = async () => {
  const made = await seedSetup();
  return { ...made, provider: withPacing(made.provider, { perSecond: 1, burst: 1 }) };
};

describeProvider('the seed provider paced by withPacing', pacedSetup, { runner: { describe, it } });

// The sandbox knows its own templates only, as WhatsApp knows only the approved ones.
const hello = template({ name: 'colloquy_hello', language: 'en_US' });
describeProvider('the Cloud API provider (createCloudApiProvider) against the sandbox', cloudSetup, { runner: { describe, it }, template: hello });
