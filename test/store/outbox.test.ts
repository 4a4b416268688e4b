import { describe, expect, it } from 'vitest';
import { ALICE, BOB, T0, inbound, DIALECTS, text, turn, allInbound, allOutbound } from './helpers.js';
import type { Store } from '../../src/store/types.js';

const LEASE = 60_000;

/** ALICE's conversation 1 with rows 1..a, then BOB's conversation 2 with the next b rows, all due at T0. */
async function setup(store: Store, a: number, b: number): Promise<void> {
  await store.commitTurn(turn({ outbox: Array.from({ length: a }, (_, i) => text(`alice ${i + 1}`)), now: T0 }));
  if (b) await store.commitTurn(turn({ key: BOB, outbox: Array.from({ length: b }, (_, i) => text(`bob ${i + 1}`)), now: T0 }));
}

const ids = (rs: readonly { id: number }[]): number[] => rs.map((r) => r.id);

describe.each(DIALECTS)('$name', ({ open }) => {
  describe('claimOutbound', () => {
    it('hands out only the oldest unsent row of each conversation, different conversations together', async () => {
      const store = await open();
      await setup(store, 3, 2);
      const claimed = await store.claimOutbound(T0, 10, LEASE);
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
      // Both conversations' heads are in flight: the next wake-up is the end of their lease.
      expect(await store.nextOutboundAt()).toBe(T0 + LEASE);
    });

    it('gives nothing more of a conversation while its row is in flight, then the next one in order', async () => {
      const store = await open();
      await setup(store, 3, 0);
      expect(ids(await store.claimOutbound(T0, 10, LEASE))).toEqual([1]);
      expect(await store.claimOutbound(T0 + 1, 10, LEASE)).toEqual([]);
      expect(await store.claimOutbound(T0 + LEASE - 1, 10, LEASE)).toEqual([]);

      await store.finishOutbound(1, { state: 'sent', providerId: 'wamid.out.1' }, T0 + 2);
      expect(ids(await store.claimOutbound(T0 + 2, 10, LEASE))).toEqual([2]);
      await store.finishOutbound(2, { state: 'failed', error: 'rejected' }, T0 + 3);
      // A final failure does not block the rest of the conversation.
      expect(ids(await store.claimOutbound(T0 + 3, 10, LEASE))).toEqual([3]);
      await store.finishOutbound(3, { state: 'sent' }, T0 + 4);
      expect(await store.claimOutbound(T0 + 4, 10, LEASE)).toEqual([]);
    });

    it('makes a row claimable again when its lease expires, counting the attempt', async () => {
      const store = await open();
      await setup(store, 2, 0);
      await store.claimOutbound(T0, 10, 1_000);
      expect(await store.claimOutbound(T0 + 999, 10, 1_000)).toEqual([]);
      // The lease ends at the time nextOutboundAt reports, so a dispatcher woken then gets the row.
      expect(await store.nextOutboundAt()).toBe(T0 + 1_000);
      const again = await store.claimOutbound(T0 + 1_000, 10, 1_000);
      expect(again).toEqual([expect.objectContaining({ id: 1, state: 'sending', attempts: 2 })]);
      expect(await store.outbound(1)).toMatchObject({ state: 'sending', attempts: 2 });
      expect(await store.nextOutboundAt()).toBe(T0 + 2_000);
      expect(await store.claimOutbound(T0 + 1_999, 10, 1_000)).toEqual([]);
    });

    it('respects the limit, oldest rows first', async () => {
      const store = await open();
      await setup(store, 2, 2);
      expect(ids(await store.claimOutbound(T0, 1, LEASE))).toEqual([1]);
      expect(ids(await store.claimOutbound(T0, 1, LEASE))).toEqual([3]);
      expect(await store.claimOutbound(T0, 1, LEASE)).toEqual([]);
    });

    it('does not hand out rows before they are due', async () => {
      const store = await open();
      await store.commitTurn(turn({ outbox: [text('later')], now: T0 + 500 }));
      expect(await store.claimOutbound(T0 + 499, 10, LEASE)).toEqual([]);
      expect(ids(await store.claimOutbound(T0 + 500, 10, LEASE))).toEqual([1]);
    });

    it('holds a retried row and the rows after it until the retry is due; other conversations go on', async () => {
      const store = await open();
      await setup(store, 2, 2);
      await store.claimOutbound(T0, 10, LEASE);
      await store.retryOutbound(1, T0 + 5_000, 'HTTP 503', '503');
      expect(await store.outbound(1)).toMatchObject({ state: 'pending', attempts: 1, nextAttemptAt: T0 + 5_000, error: 'HTTP 503', errorCode: '503' });
      expect(await store.nextOutboundAt()).toBe(T0 + 5_000); // its lease is gone: only its retry time counts

      await store.finishOutbound(3, { state: 'sent' }, T0 + 10);
      expect(ids(await store.claimOutbound(T0 + 10, 10, LEASE))).toEqual([4]);
      expect(await store.claimOutbound(T0 + 4_999, 10, LEASE)).toEqual([]);
      const retried = await store.claimOutbound(T0 + 5_000, 10, LEASE);
      expect(retried).toEqual([expect.objectContaining({ id: 1, attempts: 2, state: 'sending' })]);
      await store.finishOutbound(1, { state: 'sent' }, T0 + 5_001);
      expect(ids(await store.claimOutbound(T0 + 5_001, 10, LEASE))).toEqual([2]);
    });

    it('retries without a provider code', async () => {
      const store = await open();
      await setup(store, 1, 0);
      await store.claimOutbound(T0, 10, LEASE);
      await store.retryOutbound(1, T0 + 1, 'socket hang up', undefined);
      expect(await store.outbound(1)).toMatchObject({ error: 'socket hang up', errorCode: null });
    });
  });

  describe('SMS fallback rows', () => {
    it('orders a fallback right after its original, before later rows of the conversation', async () => {
      const store = await open();
      await setup(store, 3, 0);
      await store.claimOutbound(T0, 10, LEASE);
      await store.finishOutbound(1, { state: 'failed', error: 'not on WhatsApp', errorCode: '131026' }, T0 + 1);
      expect(await store.failOutbound(1, undefined, T0 + 1, { fallback: text('alice 1 by sms', { kind: 'sms', channel: 'sms' }) })).toBe(true);
      expect(await store.outbound(4)).toMatchObject({ conversationId: 1, ...ALICE, channel: 'sms', fallbackOf: 1, state: 'pending', nextAttemptAt: T0 + 1 });

      expect(ids(await store.claimOutbound(T0 + 1, 10, LEASE))).toEqual([4]);
      await store.finishOutbound(4, { state: 'sent' }, T0 + 2);
      expect(ids(await store.claimOutbound(T0 + 2, 10, LEASE))).toEqual([2]);
      await store.finishOutbound(2, { state: 'sent' }, T0 + 3);
      expect(ids(await store.claimOutbound(T0 + 3, 10, LEASE))).toEqual([3]);
    });

    it('puts a fallback for a later failure report before the rows not yet sent', async () => {
      const store = await open();
      await setup(store, 4, 0);
      for (const id of [1, 2]) {
        await store.claimOutbound(T0, 10, LEASE);
        await store.finishOutbound(id, { state: 'sent', providerId: `wamid.out.${id}` }, T0);
      }
      // Row 1 was accepted, then reported failed; rows 3 and 4 are still waiting.
      await store.failOutbound(1, undefined, T0 + 1, { fallback: text('1 by sms', { kind: 'sms', channel: 'sms' }) });
      expect(ids(await store.claimOutbound(T0 + 1, 10, LEASE))).toEqual([5]);
      await store.finishOutbound(5, { state: 'sent' }, T0 + 1);
      expect(ids(await store.claimOutbound(T0 + 1, 10, LEASE))).toEqual([3]);
    });

    it('keeps a retried fallback ahead of later rows', async () => {
      const store = await open();
      await setup(store, 2, 0);
      await store.claimOutbound(T0, 10, LEASE);
      await store.finishOutbound(1, { state: 'failed' }, T0);
      await store.failOutbound(1, undefined, T0, { fallback: text('sms', { kind: 'sms', channel: 'sms' }) });
      await store.claimOutbound(T0, 10, LEASE);
      await store.retryOutbound(3, T0 + 1_000, 'timeout', undefined);
      expect(await store.claimOutbound(T0 + 999, 10, LEASE)).toEqual([]);
      expect(ids(await store.claimOutbound(T0 + 1_000, 10, LEASE))).toEqual([3]);
    });

    it('adds the fallback and an inbound in one go; doing it again adds neither twice', async () => {
      const store = await open();
      await setup(store, 1, 0);
      const note = inbound({ providerId: 'delivery:1', source: 'delivery', event: { type: 'delivery.failed', channel: 'interactive', reason: 'x' }, raw: { conversationId: 1 } });
      const follow = { fallback: text('a', { kind: 'sms', channel: 'sms' }), inbound: note };
      expect(await store.failOutbound(1, undefined, T0 + 1, follow)).toBe(true);
      expect(await store.nextInbound(ALICE)).toMatchObject({ providerId: 'delivery:1', source: 'delivery', state: 'pending', delivery: { conversationId: 1 } });
      expect(await store.failOutbound(1, undefined, T0 + 2, follow)).toBe(true);
      expect((await allInbound(store)).map((r) => r.providerId)).toEqual(['delivery:1']);
      expect((await allOutbound(store)).filter((r) => r.fallbackOf === 1)).toHaveLength(1);
    });
  });

  describe('finishOutbound', () => {
    it('records an accepted interactive send', async () => {
      const store = await open();
      await setup(store, 1, 0);
      await store.claimOutbound(T0, 10, LEASE);
      await store.finishOutbound(1, { state: 'sent', providerId: 'wamid.HBg', httpStatus: 200, response: { messages: [{ id: 'wamid.HBg' }] } }, T0 + 20);
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
      });
      expect(await store.nextOutboundAt()).toBeUndefined(); // no lease left to wake up for
      expect((await store.outboundByProviderId('wamid.HBg'))?.id).toBe(1);
      expect(await store.outboundByProviderId('wamid.unknown')).toBeUndefined();
    });

    it('records an SMS result: code, mailing id and result', async () => {
      const store = await open();
      await store.commitTurn(turn({ channel: 'sms', outbox: [text('hi', { kind: 'sms', channel: 'sms' })], now: T0 }));
      await store.claimOutbound(T0, 10, LEASE);
      await store.finishOutbound(1, { state: 'sent', providerId: 'sms-77', httpStatus: 200, smsCode: 0, smsMailingId: '4711', smsResult: 'OK', response: { code: 0 } }, T0 + 3);
      expect(await store.outbound(1)).toMatchObject({ state: 'sent', channel: 'sms', providerId: 'sms-77', smsCode: 0, smsMailingId: '4711', smsResult: 'OK', response: { code: 0 }, sentAt: T0 + 3 });
    });

    it('records a final failure with its error and code, and no sent time', async () => {
      const store = await open();
      await setup(store, 1, 0);
      await store.claimOutbound(T0, 10, LEASE);
      await store.finishOutbound(1, { state: 'failed', httpStatus: 400, smsCode: 12, error: 'invalid recipient (check the number)', errorCode: '12', response: { code: 12 } }, T0 + 4);
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

  describe('nextOutboundAt', () => {
    it('is undefined with nothing to send', async () => {
      const store = await open();
      expect(await store.nextOutboundAt()).toBeUndefined();
      await setup(store, 1, 0);
      await store.claimOutbound(T0, 10, LEASE);
      await store.finishOutbound(1, { state: 'sent' }, T0);
      expect(await store.nextOutboundAt()).toBeUndefined();
    });

    it('is the earliest due row, the end of a lease, or a retry time', async () => {
      const store = await open();
      await store.commitTurn(turn({ outbox: [text('a')], now: T0 + 300 }));
      await store.commitTurn(turn({ key: BOB, outbox: [text('b')], now: T0 + 200 }));
      expect(await store.nextOutboundAt()).toBe(T0 + 200);

      await store.claimOutbound(T0 + 200, 10, 1_000); // BOB's row in flight until T0 + 1200
      expect(await store.nextOutboundAt()).toBe(T0 + 300);
      await store.claimOutbound(T0 + 300, 10, 1_000); // ALICE's until T0 + 1300
      expect(await store.nextOutboundAt()).toBe(T0 + 1_200);
      await store.retryOutbound(2, T0 + 9_000, 'busy', undefined);
      expect(await store.nextOutboundAt()).toBe(T0 + 1_300);
      await store.finishOutbound(1, { state: 'sent' }, T0 + 400);
      expect(await store.nextOutboundAt()).toBe(T0 + 9_000);
    });

    it('ignores rows waiting behind an in-flight or retried row (they are not due: no busy wake-ups)', async () => {
      const store = await open();
      await setup(store, 3, 0);
      await store.claimOutbound(T0, 10, LEASE);
      expect(await store.nextOutboundAt()).toBe(T0 + LEASE);
      await store.retryOutbound(1, T0 + 5_000, 'busy', undefined);
      expect(await store.nextOutboundAt()).toBe(T0 + 5_000);
    });
  });
});
