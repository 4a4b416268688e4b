/**
 * The Cloud API provider's pacing, in fake time: a request's time is the fake time at which the
 * provider made it, and time moves only when every send is waiting on the clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCloudApiProvider, type CloudApiProviderOptions, type Outbound, type Provider, type SendResult } from '../../src/transport/index.js';
import { ManualClock, StampingHttp, accepted, drive, metaError, startCloud, type FakeCloud } from './cloud-api-fake.js';

let cloud: FakeCloud;
let clock: ManualClock;
let http: StampingHttp;
let provider: Provider | undefined;

beforeEach(async () => {
  cloud = await startCloud();
  clock = new ManualClock();
  http = new StampingHttp(clock);
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
  await http.close();
  await cloud.close();
});

function make(extra: Partial<CloudApiProviderOptions> = {}): Provider {
  provider = createCloudApiProvider({ baseUrl: cloud.baseUrl, token: 'EAAG-pace-token', defaultNumberId: '1000001', clock, http, ...extra });
  return provider;
}

const user = (i: number) => `52155000000${String(i).padStart(2, '0')}`;
function to(u: string, numberId?: string): Outbound {
  return { channel: 'interactive', request: { messaging_product: 'whatsapp', recipient_type: 'individual', to: u, type: 'text', text: { body: 'hi' } }, numberId };
}

/** `[user, ms]` of every request to a messages path, in the order they were made. */
const arrivals = () => http.stamps.map((s) => [s.to, s.at]);

describe('Cloud API pacing', () => {
  it('a number sends a burst of one second\u2019s worth, then at its rate, in order', async () => {
    const p = make({ sendRate: 2 });
    await drive(clock, http, Promise.all([1, 2, 3, 4, 5].map((i) => p.send(to(user(i))))));
    expect(arrivals()).toEqual([
      [user(1), 0],
      [user(2), 0],
      [user(3), 500],
      [user(4), 1000],
      [user(5), 1500],
    ]);
  });

  it('each number keeps its own rate', async () => {
    const p = make({ sendRate: 1, numbers: [{ numberId: '2000002', sendRate: 2 }] });
    const sends = [p.send(to(user(1))), p.send(to(user(2))), p.send(to(user(3))), p.send(to(user(4), '2000002')), p.send(to(user(5), '2000002')), p.send(to(user(6), '2000002'))];
    await drive(clock, http, Promise.all(sends));
    expect(Object.fromEntries(arrivals())).toEqual({ [user(1)]: 0, [user(2)]: 1000, [user(3)]: 2000, [user(4)]: 0, [user(5)]: 0, [user(6)]: 500 });
  });

  it('userPaceMs spaces the messages to one user, and only to that user', async () => {
    const p = make({ userPaceMs: 3000 });
    await drive(clock, http, Promise.all([p.send(to(user(1))), p.send(to(user(1))), p.send(to(user(2))), p.send(to(user(1)))]));
    expect(arrivals()).toEqual([
      [user(1), 0],
      [user(2), 0],
      [user(1), 3000],
      [user(1), 6000],
    ]);
  });

  it('130429 pauses the whole number: another user\u2019s send waits too, and the retry goes first', async () => {
    cloud.handler = (req, n) => (n === 1 ? metaError(400, 130429, '(#130429) Rate limit hit') : accepted(req, n));
    const p = make({ sendRate: 10 });
    const first = p.send(to(user(1)));
    await http.settle(); // the 130429 came back: the number is paused for 1 s
    const second = p.send(to(user(2)));
    await http.settle();
    expect(clock.pending).toBe(2); // both wait on the clock; nothing more was sent
    expect(arrivals()).toEqual([[user(1), 0]]);
    const [a, b] = await drive(clock, http, Promise.all([first, second]));
    expect(a).toMatchObject({ ok: true, attempts: 2 });
    expect(b).toMatchObject({ ok: true, attempts: 1 });
    expect(arrivals()).toEqual([
      [user(1), 0],
      [user(1), 1000],
      [user(2), 1100], // after the pause, one send at once, then the number's rate: no burst
    ]);
  });

  it('130429 with Retry-After pauses that long; repeated, the pause without one doubles', async () => {
    cloud.handler = (req, n) => (n === 1 ? metaError(429, 130429, 'limit', undefined, { 'retry-after': '4' }) : n <= 3 ? metaError(400, 130429, 'limit') : accepted(req, n));
    const p = make({ sendRate: 10, retry: { maxAttempts: 1 } });
    const r1 = await drive(clock, http, p.send(to(user(1))));
    expect(r1).toMatchObject({ ok: false, class: 'throughput', retryAfterMs: 4000 });
    const r2 = await drive(clock, http, p.send(to(user(2))));
    expect(r2).toMatchObject({ ok: false, class: 'throughput', retryAfterMs: 2000 });
    const r3 = await drive(clock, http, p.send(to(user(3))));
    expect(r3).toMatchObject({ ok: false, class: 'throughput', retryAfterMs: 4000 });
    expect(await drive(clock, http, p.send(to(user(4))))).toMatchObject({ ok: true });
    expect(arrivals()).toEqual([
      [user(1), 0],
      [user(2), 4000],
      [user(3), 6000],
      [user(4), 10_000],
    ]);
  });

  it('a pause longer than the retry policy waits is not waited out inside the send', async () => {
    cloud.handler = () => metaError(400, 130429, 'limit', undefined, { 'retry-after': '60' });
    const p = make();
    const r = await drive(clock, http, p.send(to(user(1))));
    expect(r).toMatchObject({ ok: false, kind: 'retryable', class: 'throughput', retryAfterMs: 60_000, attempts: 1 });
    // Nor does a later send hold its caller for a minute: it ends, to be tried again when the pause is over.
    const later = await drive(clock, http, p.send(to(user(2))));
    expect(later).toMatchObject({
      ok: false,
      kind: 'retryable',
      class: 'throughput',
      retryAfterMs: 60_000,
      attempts: 0,
      reason: 'Not sent yet: phone_number_id 1000001 is paused after its throughput limit (130429) for another 60000 ms',
    });
    expect(clock.elapsed).toBe(0);
    expect(arrivals()).toEqual([[user(1), 0]]);
  });

  it('a user pace longer than the retry policy waits ends the send, to be tried again later', async () => {
    const p = make({ userPaceMs: 20_000 });
    expect(await drive(clock, http, p.send(to(user(1))))).toMatchObject({ ok: true });
    expect(await drive(clock, http, p.send(to(user(1))))).toMatchObject({ ok: false, kind: 'retryable', class: 'pair-rate', retryAfterMs: 20_000, attempts: 0 });
    expect(await drive(clock, http, p.send(to(user(2))))).toMatchObject({ ok: true });
    clock.t += 20_000;
    expect(await drive(clock, http, p.send(to(user(1))))).toMatchObject({ ok: true });
    expect(arrivals()).toEqual([
      [user(1), 0],
      [user(2), 0],
      [user(1), 20_000],
    ]);
  });

  it('131056 paces only that user: another user\u2019s send goes at once, the same user\u2019s next waits its turn', async () => {
    cloud.handler = (req, n) => (n === 1 ? metaError(400, 131056, '(#131056) Pair rate limit hit') : accepted(req, n));
    const p = make({ userPaceMs: 2000 });
    const first = p.send(to(user(1)));
    await http.settle(); // the 131056 came back: user 1 waits 6 s
    const other = p.send(to(user(2)));
    const again = p.send(to(user(1)));
    await http.settle();
    expect(arrivals()).toEqual([
      [user(1), 0],
      [user(2), 0],
    ]);
    const results: SendResult[] = await drive(clock, http, Promise.all([first, other, again]));
    expect(results.map((r) => r.ok && r.attempts)).toEqual([2, 1, 1]);
    expect(arrivals()).toEqual([
      [user(1), 0],
      [user(2), 0],
      [user(1), 6000],
      [user(1), 8000],
    ]);
  });

  it('a read receipt does not queue behind the number\u2019s waiting sends', async () => {
    const p = make({ sendRate: 1 });
    const sends = [1, 2, 3].map((i) => p.send(to(user(i))));
    await http.settle();
    const read = p.markRead!({ messageId: 'wamid.IN', from: '1', numberId: '1000001', typing: true });
    await drive(clock, http, Promise.all([...sends, read]));
    expect(http.stamps.map((s) => [s.body['status'] === 'read' ? 'read' : s.to, s.at])).toEqual([
      [user(1), 0],
      ['read', 0],
      [user(2), 1000],
      [user(3), 2000],
    ]);
  });

  it('a send aborted while it waits ends as a retryable failure, and the next send still goes', async () => {
    const p = make({ sendRate: 1 });
    await drive(clock, http, p.send(to(user(1))));
    const controller = new AbortController();
    const waiting = p.send(to(user(2)), { signal: controller.signal });
    await http.settle();
    controller.abort();
    expect(await waiting).toMatchObject({ ok: false, kind: 'retryable', reason: 'aborted by the caller', attempts: 0 });
    expect(await drive(clock, http, p.send(to(user(3))))).toMatchObject({ ok: true });
    expect(arrivals()).toEqual([
      [user(1), 0],
      [user(3), 1000],
    ]);
  });
});
