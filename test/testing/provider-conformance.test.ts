/**
 * The conformance kit run against the seed provider (`createHttpAdapter` and the sandbox): every
 * check of the contract passes, or is skipped for a feature the seed provider does not have.
 */
import { describe, it } from 'vitest';
import { describeProvider, type TestRunner } from '../../src/simulator/testing.js';
import { seedSetup } from './seed-upstream.js';

/**
 * Checks the seed provider fails today, each expected to fail (`it.fails`) so that the fix turns
 * this file red until the entry is removed. createHttpAdapter's close() rejects when called a
 * second time (undici's ClientDestroyedError from an agent already closed).
 */
const KNOWN_FAILURES = new Set(['close() resolves, also a second time']);

const runner: TestRunner = {
  describe,
  it: Object.assign((name: string, body: (context?: unknown) => Promise<void>, timeout?: number) => (KNOWN_FAILURES.has(name) ? it.fails : it)(name, body, timeout), { skip: it.skip }),
};

describeProvider('the seed provider (createHttpAdapter) against the sandbox', seedSetup, { runner });
