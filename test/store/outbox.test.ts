import { describe, expect, it } from 'vitest';
import { ALICE, BOB, T0, inbound, DIALECTS, text, turn, allInbound, allOutbound, claimSends, nextPending, WORKER } from './helpers.js';
import type { SendOutcome, SendRecord, Store } from '../../src/store/types.js';

/** ALICE's conversation 1 with rows 1..a, then BOB's conversation 2 with the next b rows, all due at T0. */
async function setup(store: Store, a: number, b: number): Promise<void> {
  await store.commitTurn(turn({ outbox: Array.from({ length: a }, (_, i) => text(`alice ${i + 1}`)), now: T0 }));
  if (b) await store.commitTurn(turn({ key: BOB, outbox: Array.from({ length: b }, (_, i) => text(`bob ${i + 1}`)), now: T0 }));
}

const ids = (rs: readonly { id: number }[]): number[] => rs.map((r) => r.id);

/** Claims sends as one worker and settles them by id with the claims it holds. */
function worker(store: Store) {
  const held = new Map<number, string>();
  const claim = async (now = T0, limit = 10) => {
    const rows = await claimSends(store, now, limit);
    for (const r of rows) held.set(r.id, r.claim!);
    return rows;
  };
  const settle = (id: number, outcome: SendOutcome, now = T0) => store.settleSend(id, held.get(id) ?? 'none', outcome, now);
  /** Records a result as the old finishOutbound did: sent, or failed for good with nothing to follow. */
  const finish = (id: number, record: SendRecord, now = T0) => settle(id, record.state === 'sent' ? { kind: 'sent', record } : { kind: 'failed', record, follow: {} }, now);
  const retry = (id: number, at: number, error: string, errorCode?: string) => settle(id, { kind: 'retry', at, error, errorCode });
  return { claim, settle, finish, retry };
}

describe.each(DIALECTS)('$name', ({ open }) => {
  describe('claim of sends', () => {
    it('hands out only the oldest unsent row of each conversation, different conversations together', async () => {
      const store = await open();
      await setup(store, 3, 2);
      const claimed = await worker(store).claim();
      expect(ids(claimed)).toEqual([1, 4]);
      expect(claimed[0]).toMatchObject({ id: 1, conversationId: 1, ...ALICE, state: 'sending', attempts: 1, message: { type: 'text', text: 'alice 1' }, request: { text: { body: 'alice 1' } } });
      expect(claimed[1]).toMatchObject({ id: 4, conversationId: 2, ...BOB, state: 'sending', attempts: 1 });
      expect(await store.outbound(1)).toMatchObject({ state: 'sending', attempts: 1 });
      expect((await allOutbound(store)).map((r) => [r.id, r.state])).toEqual([
        [1, 'sending'],
        [2, 'pending'],
        [3, 'pending'],
        [4, 'sending'],
        [5, 'pending'],
      ]);
      // Both conversations' heads are in flight: nothing else of theirs falls due.
      expect(await store.nextDue()).toBeUndefined();
    });

    it('gives nothing more of a conversation while its row is in flight, then the next one in order', async () => {
      const store = await open();
      await setup(store, 3, 0);
      const w = worker(store);
      expect(ids(await w.claim(T0))).toEqual([1]);
      expect(await w.claim(T0 + 1)).toEqual([]);
      expect(await w.claim(T0 + 365 * 86_400_000)).toEqual([]);

      await w.finish(1, { state: 'sent', providerId: 'wamid.out.1' }, T0 + 2);
      expect(ids(await w.claim(T0 + 2))).toEqual([2]);
      await w.finish(2, { state: 'failed', error: 'rejected' }, T0 + 3);
      // A final failure does not block the rest of the conversation.
      expect(ids(await w.claim(T0 + 3))).toEqual([3]);
      await w.finish(3, { state: 'sent' }, T0 + 4);
      expect(await w.claim(T0 + 4)).toEqual([]);
    });

    it('makes a row claimable again when its claim lapses, counting the attempt and the resend', async () => {
      const store = await open();
      await setup(store, 2, 0);
      const w = worker(store);
      const [first] = await w.claim(T0);
      await store.renew(WORKER.owner, 0);
      const again = await w.claim(T0);
      expect(again).toEqual([expect.objectContaining({ id: 1, state: 'sending', attempts: 2, resends: 1 })]);
      expect(again[0]!.claim).not.toBe(first!.claim);
      expect(await store.outbound(1)).toMatchObject({ state: 'sending', attempts: 2, resends: 1, claim: again[0]!.claim });
      expect(await w.claim(T0)).toEqual([]); // renewed by its claim: live again
    });

    it('respects the limit, oldest rows first', async () => {
      const store = await open();
      await setup(store, 2, 2);
      const w = worker(store);
      expect(ids(await w.claim(T0, 1))).toEqual([1]);
      expect(ids(await w.claim(T0, 1))).toEqual([3]);
      expect(await w.claim(T0, 1)).toEqual([]);
    });

    it('does not hand out rows before they are due', async () => {
      const store = await open();
      await store.commitTurn(turn({ outbox: [text('later')], now: T0 + 500 }));
      const w = worker(store);
      expect(await w.claim(T0 + 499)).toEqual([]);
      expect(ids(await w.claim(T0 + 500))).toEqual([1]);
    });

    it('holds a retried row and the rows after it until the retry is due; other conversations go on', async () => {
      const store = await open();
      await setup(store, 2, 2);
      const w = worker(store);
      await w.claim(T0);
      expect(await w.retry(1, T0 + 5_000, 'HTTP 503', '503')).toBe(true);
      expect(await store.outbound(1)).toMatchObject({ state: 'pending', attempts: 1, nextAttemptAt: T0 + 5_000, error: 'HTTP 503', errorCode: '503', claim: null });
      expect(await store.nextDue()).toBe(T0 + 5_000);

      await w.finish(3, { state: 'sent' }, T0 + 10);
      expect(ids(await w.claim(T0 + 10))).toEqual([4]);
      expect(await w.claim(T0 + 4_999)).toEqual([]);
      const retried = await w.claim(T0 + 5_000);
      expect(retried).toEqual([expect.objectContaining({ id: 1, attempts: 2, resends: 0, state: 'sending' })]);
      await w.finish(1, { state: 'sent' }, T0 + 5_001);
      expect(ids(await w.claim(T0 + 5_001))).toEqual([2]);
    });

    it('retries without a provider code', async () => {
      const store = await open();
      await setup(store, 1, 0);
      const w = worker(store);
      await w.claim(T0);
      await w.retry(1, T0 + 1, 'socket hang up');
      expect(await store.outbound(1)).toMatchObject({ error: 'socket hang up', errorCode: null });
    });
  });

  describe('SMS fallback rows', () => {
    it('orders a fallback right after its original, before later rows of the conversation', async () => {
      const store = await open();
      await setup(store, 3, 0);
      const w = worker(store);
      await w.claim(T0);
      const follow = { fallback: text('alice 1 by sms', { kind: 'sms', channel: 'sms' }) };
      expect(await w.settle(1, { kind: 'failed', record: { state: 'failed', error: 'not on WhatsApp', errorCode: '131026' }, follow }, T0 + 1)).toBe(true);
      expect(await store.outbound(1)).toMatchObject({ state: 'failed', errorCode: '131026' });
      expect(await store.outbound(4)).toMatchObject({ conversationId: 1, ...ALICE, channel: 'sms', fallbackOf: 1, state: 'pending', nextAttemptAt: T0 + 1 });

      expect(ids(await w.claim(T0 + 1))).toEqual([4]);
      await w.finish(4, { state: 'sent' }, T0 + 2);
      expect(ids(await w.claim(T0 + 2))).toEqual([2]);
      await w.finish(2, { state: 'sent' }, T0 + 3);
      expect(ids(await w.claim(T0 + 3))).toEqual([3]);
    });

    it('a failure without a result (never sent) keeps what an earlier attempt recorded', async () => {
      const store = await open();
      await setup(store, 1, 0);
      const w = worker(store);
      await w.claim(T0);
      await w.retry(1, T0, 'HTTP 503', '503');
      await w.claim(T0);
      expect(await w.settle(1, { kind: 'failed', follow: { channel: 'sms' } }, T0 + 1)).toBe(true);
      expect(await store.outbound(1)).toMatchObject({ state: 'failed', attempts: 2, error: 'HTTP 503', errorCode: '503', claim: null, sentAt: null });
      expect(await store.conversation(1)).toMatchObject({ channel: 'sms' });
    });

    it('puts a fallback for a later failure report before the rows not yet sent', async () => {
      const store = await open();
      await setup(store, 4, 0);
      const w = worker(store);
      for (const id of [1, 2]) {
        await w.claim(T0);
        await w.finish(id, { state: 'sent', providerId: `wamid.out.${id}` }, T0);
      }
      // Row 1 was accepted, then reported failed; rows 3 and 4 are still waiting.
      expect(await store.failOutbound(1, T0 + 1, { fallback: text('1 by sms', { kind: 'sms', channel: 'sms' }) })).toBe(true);
      expect(await store.outbound(1)).toMatchObject({ state: 'sent' });
      expect(ids(await w.claim(T0 + 1))).toEqual([5]);
      await w.finish(5, { state: 'sent' }, T0 + 1);
      expect(ids(await w.claim(T0 + 1))).toEqual([3]);
    });

    it('keeps a retried fallback ahead of later rows', async () => {
      const store = await open();
      await setup(store, 2, 0);
      const w = worker(store);
      await w.claim(T0);
      await w.settle(1, { kind: 'failed', record: { state: 'failed' }, follow: { fallback: text('sms', { kind: 'sms', channel: 'sms' }) } }, T0);
      await w.claim(T0);
      await w.retry(3, T0 + 1_000, 'timeout');
      expect(await w.claim(T0 + 999)).toEqual([]);
      expect(ids(await w.claim(T0 + 1_000))).toEqual([3]);
    });

    it('adds the fallback and an inbound in one go; doing it again adds neither twice', async () => {
      const store = await open();
      await setup(store, 1, 0);
      const note = inbound({ providerId: 'delivery:1', source: 'delivery', event: { type: 'delivery.failed', channel: 'interactive', reason: 'x' }, raw: { conversationId: 1 } });
      const follow = { fallback: text('a', { kind: 'sms', channel: 'sms' }), inbound: note };
      expect(await store.failOutbound(1, T0 + 1, follow)).toBe(true);
      expect(await nextPending(store, ALICE)).toMatchObject({ providerId: 'delivery:1', source: 'delivery', state: 'pending', delivery: { conversationId: 1 } });
      expect(await store.failOutbound(1, T0 + 2, follow)).toBe(true);
      expect((await allInbound(store)).map((r) => r.providerId)).toEqual(['delivery:1']);
      expect((await allOutbound(store)).filter((r) => r.fallbackOf === 1)).toHaveLength(1);
    });
  });

  describe('settling a sent row', () => {
    it('records an accepted interactive send', async () => {
      const store = await open();
      await setup(store, 1, 0);
      const w = worker(store);
      await w.claim(T0);
      await w.finish(1, { state: 'sent', providerId: 'wamid.HBg', httpStatus: 200, response: { messages: [{ id: 'wamid.HBg' }] } }, T0 + 20);
      expect(await store.outbound(1)).toMatchObject({
        state: 'sent',
        attempts: 1,
        providerId: 'wamid.HBg',
        httpStatus: 200,
        response: { messages: [{ id: 'wamid.HBg' }] },
        smsCode: null,
        smsMailingId: null,
        smsResult: null,
        error: null,
        errorCode: null,
        sentAt: T0 + 20,
        deliveryStatus: null,
        claim: null,
        resends: 0,
      });
      expect(await store.nextDue()).toBeUndefined();
      expect((await store.outboundByProviderId('wamid.HBg'))?.id).toBe(1);
      expect(await store.outboundByProviderId('wamid.unknown')).toBeUndefined();
    });

    it('records an SMS result: code, mailing id and result', async () => {
      const store = await open();
      await store.commitTurn(turn({ channel: 'sms', outbox: [text('hi', { kind: 'sms', channel: 'sms' })], now: T0 }));
      const w = worker(store);
      await w.claim(T0);
      await w.finish(1, { state: 'sent', providerId: 'sms-77', httpStatus: 200, smsCode: 0, smsMailingId: '4711', smsResult: 'OK', response: { code: 0 } }, T0 + 3);
      expect(await store.outbound(1)).toMatchObject({ state: 'sent', channel: 'sms', providerId: 'sms-77', smsCode: 0, smsMailingId: '4711', smsResult: 'OK', response: { code: 0 }, sentAt: T0 + 3 });
    });

    it('records a final failure with its error and code, and no sent time', async () => {
      const store = await open();
      await setup(store, 1, 0);
      const w = worker(store);
      await w.claim(T0);
      await w.finish(1, { state: 'failed', httpStatus: 400, smsCode: 12, error: 'invalid recipient (check the number)', errorCode: '12', response: { code: 12 } }, T0 + 4);
      expect(await store.outbound(1)).toMatchObject({
        state: 'failed',
        httpStatus: 400,
        smsCode: 12,
        error: 'invalid recipient (check the number)',
        errorCode: '12',
        providerId: null,
        sentAt: null,
        response: { code: 12 },
      });
    });
  });

  describe('nextDue of sends', () => {
    it('is undefined with nothing to send', async () => {
      const store = await open();
      expect(await store.nextDue()).toBeUndefined();
      await setup(store, 1, 0);
      const w = worker(store);
      await w.claim(T0);
      await w.finish(1, { state: 'sent' }, T0);
      expect(await store.nextDue()).toBeUndefined();
    });

    it('is the earliest due row or retry time; rows in flight are not due, whatever their lease', async () => {
      const store = await open();
      await store.commitTurn(turn({ outbox: [text('a')], now: T0 + 300 }));
      await store.commitTurn(turn({ key: BOB, outbox: [text('b')], now: T0 + 200 }));
      expect(await store.nextDue()).toBe(T0 + 200);

      const w = worker(store);
      await w.claim(T0 + 200); // BOB's row in flight
      expect(await store.nextDue()).toBe(T0 + 300);
      await w.claim(T0 + 300);
      expect(await store.nextDue()).toBeUndefined();
      await w.retry(2, T0 + 9_000, 'busy');
      expect(await store.nextDue()).toBe(T0 + 9_000);
      await w.finish(1, { state: 'sent' }, T0 + 400);
      expect(await store.nextDue()).toBe(T0 + 9_000);
    });

    it('ignores rows waiting behind an in-flight or retried row (they are not due: no busy wake-ups)', async () => {
      const store = await open();
      await setup(store, 3, 0);
      const w = worker(store);
      await w.claim(T0);
      expect(await store.nextDue()).toBeUndefined();
      await w.retry(1, T0 + 5_000, 'busy');
      expect(await store.nextDue()).toBe(T0 + 5_000);
    });
  });
});
