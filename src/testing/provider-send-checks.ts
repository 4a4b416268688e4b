/**
 * The kit's checks of what a provider does: `send()` for each upstream outcome (never throwing,
 * each failure of the kind and class the runtime acts on), SMS, an aborted send, `markRead()` and
 * `close()`.
 */
import { buttons } from '../messages/builders.js';
import { toSmsRequest } from '../messages/request.js';
import type { FailureClass } from '../transport/provider.js';
import type { Outbound, SendFailed, SendResult } from '../transport/types.js';
import { checkResult, describeError, ProviderContractError, safeJson, sendOnce, type CheckResult, type UpstreamOutcome, type World } from './provider-world.js';

const PASSED: CheckResult = { status: 'passed' };

/** What a failure outcome must come back as, and why the runtime needs it so. */
interface Expected {
  readonly kind: SendFailed['kind'];
  readonly class: FailureClass;
  /** The outcome, for a person. */
  readonly meaning: string;
  /** What the runtime does with it. */
  readonly follows: string;
}

/** The outcomes that end in a failure. */
export type FailureOutcome = Exclude<UpstreamOutcome, 'accept' | 'transient'>;

const EXPECTED: Record<FailureOutcome | 'transient', Expected> = {
  throughput: { kind: 'retryable', class: 'throughput', meaning: "the number's throughput limit (130429)", follows: 'the runtime waits, paces the number and sends it again' },
  'pair-rate': { kind: 'retryable', class: 'pair-rate', meaning: 'too many messages to one user (131056)', follows: 'the runtime paces that user and sends it again' },
  window: { kind: 'permanent', class: 'window', meaning: 'a closed 24-hour window (131047)', follows: "the runtime applies the bot's window policy" },
  undeliverable: { kind: 'permanent', class: 'undeliverable', meaning: 'a user who cannot receive it (131026)', follows: 'the runtime falls back to SMS' },
  invalid: { kind: 'permanent', class: 'invalid', meaning: 'a parameter the provider refused', follows: "the runtime fails the message with the provider's explanation" },
  auth: { kind: 'permanent', class: 'auth', meaning: 'refused credentials', follows: 'the runtime never retries it: it is a configuration error' },
  transient: { kind: 'retryable', class: 'transient', meaning: 'a server error', follows: 'the runtime sends it again later' },
  down: { kind: 'retryable', class: 'transient', meaning: 'an upstream that does not answer', follows: 'the runtime sends it again later' },
};

/** `send()` with an accepting upstream: ok, the provider's id, and exactly one message delivered. */
export async function checkAccept(w: World): Promise<CheckResult> {
  const before = await receivedCount(w);
  await w.answer('accept');
  const r = await sendOnce(w, probe(w), 'when the upstream accepts');
  if (!r.ok) return w.fail(`send() failed when the upstream accepted the message: ${r.reason}`);
  if (typeof r.providerId !== 'string' || r.providerId === '')
    w.fail(`send() accepted without a providerId (got ${safeJson(r.providerId)}); return the provider's message id: statuses on the webhook are matched to the message by it`);
  await expectDelivered(w, before, 1, 'one accepted send');
  return PASSED;
}

/** `send()` meeting a failure: a SendFailed of the kind (and class, if any) the runtime acts on. */
export async function checkFailure(w: World, outcome: FailureOutcome): Promise<CheckResult> {
  const expected = EXPECTED[outcome];
  await w.answer(outcome);
  const r = await sendOnce(w, probe(w), `when the upstream answers "${outcome}"`);
  if (r.ok) return w.fail(`send() reported success when the upstream answered "${outcome}" (${expected.meaning}); return { ok: false, … } so that ${expected.follows}`);
  expectFailure(w, r, outcome, expected);
  return PASSED;
}

/** `send()` meeting one server error: the provider's retry succeeds (delivering once), or it is a retryable failure. */
export async function checkTransient(w: World): Promise<CheckResult> {
  const before = await receivedCount(w);
  await w.answer('transient');
  const r = await sendOnce(w, probe(w), 'when the upstream answers one server error, then accepts');
  if (r.ok) await expectDelivered(w, before, 1, 'a send retried after one server error');
  else expectFailure(w, r, 'transient', EXPECTED.transient);
  return PASSED;
}

/** An SMS, when the provider has the SMS channel. */
export async function checkSms(w: World): Promise<CheckResult> {
  if (!w.provider.features.sms) return { status: 'not-applicable', reason: 'features.sms is false: the runtime sends no SMS through this provider' };
  await w.answer('accept');
  const r = await sendOnce(w, { channel: 'sms', request: toSmsRequest('Your pizza is on its way.', { to: w.address.to }) }, 'for an SMS (features.sms is true)');
  if (!r.ok) w.fail(`send() failed for an SMS although features.sms is true and the upstream accepts: ${r.reason}`);
  return PASSED;
}

/**
 * An aborted signal ends the send without throwing; if it fails, it is worth trying again. Two in
 * a row, so that a provider that queues its sends (pacing) is caught throwing for one aborted while
 * it waits its turn.
 */
export async function checkAborted(w: World): Promise<CheckResult> {
  await w.answer('accept');
  const controller = new AbortController();
  controller.abort();
  for (const which of ['with an already aborted signal', 'with an already aborted signal, right after another']) {
    const r = await sendOnce(w, probe(w), which, { signal: controller.signal });
    if (!r.ok && r.kind !== 'retryable') w.fail(`send() ${which} failed as "${r.kind}"; an aborted send says nothing about the message: make it "retryable"`);
  }
  return PASSED;
}

/** `markRead()`, when the provider has read receipts: never throws, fails when the upstream is down. */
export async function checkMarkRead(w: World, down: boolean): Promise<CheckResult> {
  const markRead = w.provider.markRead;
  if (!w.provider.features.readReceipts) return { status: 'not-applicable', reason: 'features.readReceipts is false: the runtime never marks messages read through this provider' };
  if (typeof markRead !== 'function') return w.fail('features.readReceipts is true but markRead() is missing');
  const receipt = { messageId: 'wamid.conformance-read-receipt', from: w.address.from, numberId: w.numberId, typing: true };
  await w.answer('accept');
  await readOnce(w, () => markRead.call(w.provider, receipt), 'when the upstream accepts');
  if (!down) return PASSED;
  await w.answer('down');
  const r = await readOnce(w, () => markRead.call(w.provider, receipt), 'when the upstream is down');
  if (r.ok) w.fail('markRead() reported success although the upstream did not answer; return { ok: false, … }');
  return PASSED;
}

/** `close()` resolves, also when called a second time. */
export async function checkClose(w: World): Promise<CheckResult> {
  for (const time of ['the first time', 'a second time']) {
    try {
      await w.settle(`close() called ${time}`, () => w.provider.close());
    } catch (err) {
      w.fail(`close() rejected when called ${time} (${describeError(err)}); close() must resolve, and do nothing when already closed (the server may close twice on the way down)`, err);
    }
  }
  return PASSED;
}

async function readOnce(w: World, call: () => Promise<SendResult>, what: string): Promise<SendResult> {
  let r: SendResult;
  try {
    r = await w.settle(`markRead() ${what}`, call);
  } catch (err) {
    if (err instanceof ProviderContractError) throw err;
    return w.fail(`markRead() threw ${what} (${describeError(err)}); it must never throw: the runtime calls it beside the turn and does not wait for it`, err);
  }
  return checkResult(w, r, undefined, `markRead() ${what}`);
}

function expectFailure(w: World, r: SendFailed, outcome: UpstreamOutcome, expected: Expected): void {
  const as = `when the upstream answered "${outcome}" (${expected.meaning})`;
  if (r.kind !== expected.kind) w.fail(`send() failed as "${r.kind}" ${as}; it must be "${expected.kind}" because ${expected.follows}`);
  if (r.class !== undefined && r.class !== expected.class) w.fail(`send() gave class "${r.class}" ${as}; use class "${expected.class}" (or none) because ${expected.follows}`);
  if (outcome === 'auth' && r.auth !== true) w.fail(`send() failed ${as} without auth: true; mark refused credentials with auth: true, so the runtime reports a configuration error and never retries`);
  if (outcome === 'window' && w.provider.features.window && r.class !== 'window') {
    w.fail(`send() failed ${as} without class "window" although features.window is true; mark it class "window" so that ${expected.follows}`);
  }
  if (r.retryAfterMs !== undefined && !(Number.isFinite(r.retryAfterMs) && r.retryAfterMs >= 0))
    w.fail(`send() gave retryAfterMs ${safeJson(r.retryAfterMs)} ${as}; it must be a number of milliseconds ≥ 0, or absent`);
}

/** A message every provider carries: reply buttons, built by the provider itself. */
function probe(w: World): Outbound {
  const message = buttons({
    body: 'Which size?',
    buttons: [
      { id: 'small', title: 'Small' },
      { id: 'large', title: 'Large' },
    ],
  });
  let request: unknown;
  try {
    request = w.provider.request(message, w.address);
  } catch (err) {
    return w.fail(`request() threw for plain reply buttons (${describeError(err)}); the send checks need it to build their message`, err);
  }
  return { channel: 'interactive', request: request as Record<string, unknown>, from: w.address.from, numberId: w.numberId };
}

async function receivedCount(w: World): Promise<number> {
  let got: readonly unknown[];
  try {
    got = await w.upstream.received();
  } catch (err) {
    return w.fail(`the setup's upstream.received() threw (${describeError(err)})`, err);
  }
  if (!Array.isArray(got)) return w.fail(`the setup's upstream.received() returned ${safeJson(got)}; it must return an array of what the upstream accepted`);
  return got.length;
}

async function expectDelivered(w: World, before: number, n: number, what: string): Promise<void> {
  const delivered = (await receivedCount(w)) - before;
  if (delivered !== n) {
    w.fail(
      `${what} delivered ${delivered} message${delivered === 1 ? '' : 's'} to the upstream, not ${n}${delivered > n ? ': the provider sent it again after the upstream took it' : ': the send reported ok but nothing reached the upstream'}`,
    );
  }
}
