/**
 * What the provider conformance kit works with: the provider under test, the control surface of
 * the author's fake upstream, and the error a broken contract is reported with. Each check runs in
 * a world of its own (a fresh `setup()`), torn down whatever happened.
 */
import { ColloquyError } from '../errors.js';
import type { TemplateMessage } from '../messages/message.js';
import type { Provider, ProviderAddress } from '../transport/provider.js';
import type { Channel, Outbound, SendResult } from '../transport/types.js';

/**
 * How the upstream (the author's fake of the provider's API) answers from now on:
 * - `accept`: takes the message and answers with the provider's id for it;
 * - `throughput`: the sending number's rate limit (Cloud API 130429);
 * - `pair-rate`: too many messages to this user (131056);
 * - `window`: the 24-hour window has closed (131047);
 * - `undeliverable`: the user cannot receive it (131026);
 * - `invalid`: a parameter the provider refuses (100, 131009);
 * - `auth`: the credentials are refused (401, 190), also when the provider fetches a new token;
 * - `transient`: a 5xx (or 131000) to the first request, then `accept`;
 * - `down`: no answer at all (the connection is refused, or the request times out).
 */
export type UpstreamOutcome = 'accept' | 'throughput' | 'pair-rate' | 'window' | 'undeliverable' | 'invalid' | 'auth' | 'transient' | 'down';

/** Every outcome, in the order the kit checks them. */
export const UPSTREAM_OUTCOMES: readonly UpstreamOutcome[] = ['accept', 'throughput', 'pair-rate', 'window', 'undeliverable', 'invalid', 'auth', 'transient', 'down'];

/** What a setup may declare it cannot do: an outcome its upstream cannot produce, or an SMS channel it does not serve. */
export type Unsupportable = Exclude<UpstreamOutcome, 'accept'> | 'sms';

/** Every {@link Unsupportable}. */
export const UNSUPPORTABLE: readonly Unsupportable[] = ['throughput', 'pair-rate', 'window', 'undeliverable', 'invalid', 'auth', 'transient', 'down', 'sms'];

/** What a check found: it passed, or it does not apply to this provider's features (why). */
export type CheckResult = { readonly status: 'passed' } | { readonly status: 'not-applicable'; readonly reason: string };

/** The control surface of the author's fake upstream. */
export interface ProviderUpstream {
  /** Makes every request from now on meet `outcome` (for `transient`: the first request only, then accept). */
  answer(outcome: UpstreamOutcome): void | Promise<void>;
  /** The messages the upstream accepted so far (their bodies or records, in order); only their number is checked. */
  received(): readonly unknown[] | Promise<readonly unknown[]>;
  /** Stops the fake (called after each check, after `provider.close()`). */
  close?(): void | Promise<void>;
}

/** What a setup returns: a provider pointed at a fake upstream it controls. */
export interface ProviderUnderTest {
  readonly provider: Provider;
  readonly upstream: ProviderUpstream;
  /** Who the kit's messages go from and to (default from `15550000001`, to `15550000002`, flow token `conformance-flow-token`). */
  readonly address?: Partial<ProviderAddress> | undefined;
  /** The `phone_number_id` to put on each send (`Outbound.numberId`), for providers that need one. */
  readonly numberId?: string | undefined;
  /** Credentials the provider holds (client secret, access token): none may appear in any result. */
  readonly secrets?: readonly string[] | undefined;
}

/** Builds a fresh provider and upstream; called once per check. */
export type ProviderSetup = () => ProviderUnderTest | Promise<ProviderUnderTest>;

/** How the kit runs. */
export interface ConformanceOptions {
  /** What the upstream cannot do, each with the reason shown where the check is skipped. */
  readonly unsupported?: Partial<Record<Unsupportable, string>> | undefined;
  /** The template to send when `features.templates` (default a body-only `conformance_check` in `en_US`); name one the fake knows. */
  readonly template?: TemplateMessage | undefined;
  /** How long one provider call may take before the check fails (default 20 s); a provider must time out its own requests. */
  readonly callTimeoutMs?: number | undefined;
}

/** A provider (or its setup) breaks the contract; the message says what to fix. */
export class ProviderContractError extends ColloquyError {
  override name = 'ProviderContractError';
  /** The check that failed. */
  readonly check: string;
  constructor(check: string, message: string, options?: { cause?: unknown }) {
    super('provider_contract', `${check}: ${message}`, options);
    this.check = check;
  }
}

/** A check's world: the setup's parts with the defaults filled in. */
export interface World {
  readonly check: string;
  readonly provider: Provider;
  readonly upstream: ProviderUpstream;
  readonly address: ProviderAddress & { readonly flowToken: string };
  readonly numberId: string | undefined;
  readonly secrets: readonly string[];
  readonly options: ConformanceOptions;
  /** Throws a {@link ProviderContractError} for this check. */
  fail(message: string, cause?: unknown): never;
  /** Has the upstream meet `outcome` from now on; fails the check, saying what to declare, when the fake cannot. */
  answer(outcome: UpstreamOutcome): Promise<void>;
  /** Awaits a provider call, failing the check when it takes longer than the call timeout. */
  settle<T>(what: string, call: () => Promise<T> | T): Promise<T>;
}

const DEFAULT_ADDRESS = { from: '15550000001', to: '15550000002', flowToken: 'conformance-flow-token' } as const;
const DEFAULT_CALL_TIMEOUT_MS = 20_000;

/** Runs `body` in a fresh world from `setup`, then closes the provider and the upstream. */
export async function inWorld(check: string, setup: ProviderSetup, options: ConformanceOptions, body: (w: World) => Promise<void>): Promise<void> {
  const fail = (message: string, cause?: unknown): never => {
    throw new ProviderContractError(check, message, cause === undefined ? undefined : { cause });
  };
  let made: ProviderUnderTest;
  try {
    made = await setup();
  } catch (err) {
    return fail(`the setup function threw: ${describeError(err)}`, err);
  }
  if (typeof made !== 'object' || made === null || typeof made.provider !== 'object' || made.provider === null || typeof made.upstream !== 'object' || made.upstream === null) {
    return fail('the setup function must return { provider, upstream }');
  }
  const world: World = {
    check,
    provider: made.provider,
    upstream: made.upstream,
    address: addressOf(made.address),
    numberId: made.numberId,
    secrets: (made.secrets ?? []).filter((s) => typeof s === 'string' && s !== ''),
    options,
    fail,
    answer: async (outcome) => {
      try {
        await made.upstream.answer(outcome);
      } catch (err) {
        fail(`the setup's upstream.answer("${outcome}") threw (${describeError(err)}); if the fake cannot produce it, declare it: { unsupported: { '${outcome}': 'why' } }`, err);
      }
    },
    settle: (what, call) => settle(what, call, options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS, fail),
  };
  let passed = false;
  try {
    await body(world);
    passed = true;
  } finally {
    await teardown(world, passed);
  }
}

/** Closes the provider and the upstream; their failures are reported only when the check itself passed (not to hide its own). */
async function teardown(w: World, report: boolean): Promise<void> {
  const problems: string[] = [];
  await Promise.resolve()
    .then(() => w.provider.close())
    .catch((err: unknown) => problems.push(`close() rejected: ${describeError(err)}; close() must release what the provider holds and resolve`));
  await Promise.resolve()
    .then(() => w.upstream.close?.())
    .catch((err: unknown) => problems.push(`the setup's upstream.close() rejected: ${describeError(err)}`));
  if (report && problems.length > 0) w.fail(problems.join('; '));
}

async function settle<T>(what: string, call: () => Promise<T> | T, ms: number, fail: (m: string, cause?: unknown) => never): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutSignal()), ms);
    timer.unref();
  });
  try {
    return await Promise.race([Promise.resolve().then(call), late]);
  } catch (err) {
    if (err instanceof TimeoutSignal) return fail(`${what} did not settle within ${ms} ms: a provider must time out its own requests (and give up retrying) well before that`);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

class TimeoutSignal extends Error {}

function addressOf(a: Partial<ProviderAddress> | undefined): World['address'] {
  return { from: a?.from ?? DEFAULT_ADDRESS.from, to: a?.to ?? DEFAULT_ADDRESS.to, flowToken: a?.flowToken ?? DEFAULT_ADDRESS.flowToken };
}

/** An error as one line: its name and message, never its stack. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message.split('\n')[0]}`;
  return typeof err === 'string' ? err : `a thrown ${err === null ? 'null' : typeof err} (${safeJson(err)})`;
}

/** JSON of anything, `[unserialisable]` when it cannot be. */
export function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return '[unserialisable]';
  }
}

/**
 * One `send()` through the world's provider: fails the check when it throws, hangs, answers
 * something that is not a {@link SendResult}, or lets a declared secret into its result.
 */
export async function sendOnce(w: World, outbound: Outbound, what: string, options?: { signal?: AbortSignal }): Promise<SendResult> {
  let result: SendResult;
  try {
    result = await w.settle(`send() ${what}`, () => w.provider.send(outbound, options));
  } catch (err) {
    if (err instanceof ProviderContractError) throw err;
    return w.fail(`send() threw ${what} (${describeError(err)}); send() must never throw: return { ok: false, kind, reason } and let the runtime decide`, err);
  }
  return checkResult(w, result, outbound.channel, `send() ${what}`);
}

/** Fails the check unless `result` is a well-formed {@link SendResult} on `channel` holding no secret. */
export function checkResult(w: World, result: SendResult, channel: Channel | undefined, what: string): SendResult {
  if (typeof result !== 'object' || result === null || typeof result.ok !== 'boolean')
    return w.fail(`${what} resolved with ${safeJson(result)}; it must resolve with a SendResult ({ ok: true, … } or { ok: false, … })`);
  if (channel !== undefined && result.channel !== channel) w.fail(`${what} answered for channel ${safeJson(result.channel)}; a result carries the channel it was sent on ("${channel}")`);
  if (!result.ok) {
    if (result.kind !== 'permanent' && result.kind !== 'retryable') w.fail(`${what} failed with kind ${safeJson(result.kind)}; kind must be "permanent" or "retryable"`);
    if (typeof result.reason !== 'string' || result.reason.trim() === '')
      w.fail(`${what} failed with no reason; a failure's reason tells a person what went wrong (it reaches logs and the bot's delivery.failed event)`);
  }
  const fields: Record<string, unknown> = result.ok
    ? { providerId: result.providerId, raw: result.raw }
    : { reason: result.reason, hint: result.hint, providerCode: result.providerCode, raw: result.raw };
  for (const [field, value] of Object.entries(fields)) {
    const text = typeof value === 'string' ? value : safeJson(value);
    const leaked = w.secrets.findIndex((s) => text.includes(s));
    if (leaked >= 0)
      w.fail(`${what}: the result's ${field} contains secret #${leaked + 1} of those the setup declared; a result is logged and stored, so redact credentials from everything the provider answers`);
  }
  return result;
}
