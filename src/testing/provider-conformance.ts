/**
 * The provider conformance kit: the contract every provider (`Provider`, from `colloquy/transport`)
 * must keep, as checks to run against a provider pointed at a fake of its upstream.
 * `describeProvider` registers them with a test runner (vitest, jest, mocha: anything with
 * `describe` and `it`); `providerContract` returns them as plain async functions for any other
 * runner. Neither imports a test framework.
 */
import { ConfigError } from '../errors.js';
import { checkButtons, checkFeatures, checkFlows, checkInvalid, checkList, checkTemplate, checkText } from './provider-request-checks.js';
import { checkAborted, checkAccept, checkClose, checkFailure, checkMarkRead, checkSms, checkTransient, type FailureOutcome } from './provider-send-checks.js';
import { inWorld, UNSUPPORTABLE, type CheckResult, type ConformanceOptions, type ProviderSetup, type Unsupportable, type World } from './provider-world.js';

export {
  ProviderContractError,
  UPSTREAM_OUTCOMES,
  type CheckResult,
  type ConformanceOptions,
  type ProviderSetup,
  type ProviderUnderTest,
  type ProviderUpstream,
  type Unsupportable,
  type UpstreamOutcome,
} from './provider-world.js';

/** One check of the contract. */
export interface ContractCheck {
  /** What it checks, for a test's name. */
  readonly name: string;
  /** Set when the check cannot run because the setup declared what it needs unsupported: the setup's reason. */
  readonly skip?: string | undefined;
  /**
   * Runs the check in a fresh world from the setup (closed afterwards). Resolves with `passed`, or
   * `not-applicable` (with why) when the provider's features exclude what it checks; rejects with a
   * {@link ProviderContractError} that says what to fix.
   */
  run(): Promise<CheckResult>;
}

interface Spec {
  readonly name: string;
  /** What the check needs that a setup may declare unsupported. */
  readonly needs?: Unsupportable | undefined;
  readonly body: (w: World) => Promise<CheckResult>;
}

const FAILURES: readonly { outcome: FailureOutcome; name: string }[] = [
  { outcome: 'throughput', name: 'send() meeting the throughput limit (130429) fails as retryable' },
  { outcome: 'pair-rate', name: 'send() meeting the pair rate limit (131056) fails as retryable' },
  { outcome: 'window', name: 'send() outside the 24-hour window (131047) fails as permanent, class "window" when the provider keeps the window' },
  { outcome: 'undeliverable', name: 'send() to a user who cannot receive it (131026) fails as permanent' },
  { outcome: 'invalid', name: 'send() with a parameter the provider refuses fails as permanent' },
  { outcome: 'auth', name: 'send() with refused credentials fails as permanent with auth: true' },
  { outcome: 'down', name: 'send() to an upstream that does not answer resolves, failing as retryable' },
];

function specs(options: ConformanceOptions): Spec[] {
  const down = options.unsupported?.down === undefined;
  return [
    { name: 'is a provider: a name, the five features, markRead exactly when readReceipts', body: checkFeatures },
    { name: 'request() builds a list', body: checkList },
    { name: 'request() builds reply buttons with no header and with each media header', body: checkButtons },
    { name: "request() builds flows (navigate, data_exchange) with the conversation's flow token", body: checkFlows },
    { name: 'request() builds text when features.text', body: checkText },
    { name: 'request() builds a template when features.templates, and refuses one otherwise', body: checkTemplate },
    { name: 'request() throws MessageValidationError with a field path for a message that cannot go', body: checkInvalid },
    { name: 'send() to an accepting upstream returns ok with the providerId, delivering once', body: checkAccept },
    ...FAILURES.map(({ outcome, name }): Spec => ({ name, needs: outcome, body: (w) => checkFailure(w, outcome) })),
    { name: 'send() meeting one server error then acceptance delivers once, or fails as retryable', needs: 'transient', body: checkTransient },
    { name: 'send() delivers an SMS when features.sms', needs: 'sms', body: checkSms },
    { name: 'send() with an aborted signal resolves without throwing', body: checkAborted },
    { name: 'markRead() never throws, and fails when the upstream is down', body: (w) => checkMarkRead(w, down) },
    { name: 'close() resolves, also a second time', body: checkClose },
  ];
}

/**
 * The contract's checks for the provider `setup` builds, as named async functions (for a runner
 * other than the ones {@link describeProvider} serves). `setup` is called once per check.
 *
 * @example
 * for (const check of providerContract(setup)) {
 *   if (check.skip) console.log(`skipped: ${check.name} (${check.skip})`);
 *   else console.log(check.name, (await check.run()).status);
 * }
 */
export function providerContract(setup: ProviderSetup, options: ConformanceOptions = {}): ContractCheck[] {
  checkOptions(options);
  return specs(options).map((spec) => {
    const reason = spec.needs === undefined ? undefined : options.unsupported?.[spec.needs];
    const run = async (): Promise<CheckResult> => {
      let result: CheckResult = { status: 'passed' };
      await inWorld(spec.name, setup, options, async (w) => {
        result = await spec.body(w);
      });
      return result;
    };
    return { name: spec.name, ...(reason !== undefined && { skip: reason }), run };
  });
}

/** The part of a test runner {@link describeProvider} uses: vitest's, jest's or mocha's `describe` and `it`. */
export interface TestRunner {
  describe(name: string, body: () => void): unknown;
  it: {
    (name: string, body: (context?: unknown) => Promise<void>, timeout?: number): unknown;
    skip(name: string, body: () => void): unknown;
  };
}

/** What {@link describeProvider} takes besides the kit's options. */
export interface DescribeProviderOptions extends ConformanceOptions {
  /** The runner's `describe` and `it` (default: the globals, when the runner installs them). */
  readonly runner?: TestRunner | undefined;
  /** Each check's timeout in milliseconds, given to `it` (default 60 s). */
  readonly timeoutMs?: number | undefined;
}

/**
 * Registers the contract's checks for the provider `setup` builds as one `describe` block of tests,
 * one test per check. A check the setup declared unsupported is registered skipped, its reason in
 * the name; one the provider's features exclude is skipped at run time where the runner can
 * (vitest's `context.skip`).
 *
 * @example
 * import { describe, it } from 'vitest';
 * describeProvider('my provider', setup, { runner: { describe, it }, unsupported: { down: 'the fake cannot drop connections' } });
 */
export function describeProvider(name: string, setup: ProviderSetup, options: DescribeProviderOptions = {}): void {
  const runner = options.runner ?? globalRunner();
  const checks = providerContract(setup, options);
  const timeout = options.timeoutMs ?? 60_000;
  runner.describe(`${name}: the provider contract`, () => {
    for (const check of checks) {
      if (check.skip !== undefined) {
        runner.it.skip(`${check.name} (unsupported: ${check.skip})`, () => undefined);
        continue;
      }
      runner.it(
        check.name,
        async (context) => {
          const result = await check.run();
          const skip = (context as { skip?: unknown } | undefined)?.skip;
          if (result.status === 'not-applicable' && typeof skip === 'function') skip.call(context, result.reason);
        },
        timeout,
      );
    }
  });
}

function globalRunner(): TestRunner {
  const g = globalThis as { describe?: unknown; it?: unknown };
  if (typeof g.describe === 'function' && typeof g.it === 'function' && typeof (g.it as { skip?: unknown }).skip === 'function') return g as unknown as TestRunner;
  throw new ConfigError('runner', "describeProvider needs the test runner's describe and it: pass { runner: { describe, it } } (import them from 'vitest'), or enable the runner's globals");
}

function checkOptions(options: ConformanceOptions): void {
  const known = new Set<string>(UNSUPPORTABLE);
  for (const [key, reason] of Object.entries(options.unsupported ?? {})) {
    if (!known.has(key)) throw new ConfigError(`unsupported.${key}`, `is not something a provider may leave out (${[...known].join(', ')}); "accept" is required of every upstream`);
    if (typeof reason !== 'string' || reason.trim() === '') throw new ConfigError(`unsupported.${key}`, 'needs a reason, shown where the check is skipped');
  }
  const ms = options.callTimeoutMs;
  if (ms !== undefined && !(Number.isFinite(ms) && ms > 0)) throw new ConfigError('callTimeoutMs', `must be a positive number of milliseconds (got ${ms})`);
}
