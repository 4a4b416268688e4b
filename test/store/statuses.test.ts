import { describe, expect, it } from 'vitest';
import type { NewStatus, Store } from '../../src/store/types.js';
import { BOB, T0, DIALECTS, claimSends, sent as settleSent, text, turn } from './helpers.js';

/** One sent row (id 1) with provider id `wamid.S`. */
async function sent(store: Store): Promise<void> {
  await store.commitTurn(turn({ outbox: [text('hi')], now: T0 }));
  const [row] = await claimSends(store);
  await settleSent(store, row!, { state: 'sent', providerId: 'wamid.S' });
}

const status = (s: string, over: Partial<NewStatus> = {}): NewStatus => ({ providerMessageId: 'wamid.S', status: s, receivedAt: T0 + 1, ...over });

describe.each(DIALECTS)('$name', ({ open }) => {
  describe('addStatus', () => {
    it('records a status and moves the outbound row to it', async () => {
      const store = await open();
      await sent(store);
      const r = await store.addStatus(status('delivered', { timestamp: 1_700_000_001, recipient: '4915100000001', raw: { id: 'wamid.S' }, receivedAt: T0 + 5 }));
      expect(r.duplicate).toBe(false);
      expect(r.outbound).toMatchObject({ id: 1, providerId: 'wamid.S', deliveryStatus: 'delivered', state: 'sent' });
      expect((await store.outbound(1))?.deliveryStatus).toBe('delivered');
      expect(await store.statuses('wamid.S')).toEqual([
        { providerMessageId: 'wamid.S', status: 'delivered', timestamp: 1_700_000_001, recipient: '4915100000001', errors: undefined, raw: { id: 'wamid.S' }, receivedAt: T0 + 5 },
      ]);
    });

    it('dedupes the same status of the same message', async () => {
      const store = await open();
      await sent(store);
      await store.addStatus(status('delivered'));
      const before = await store.statuses('wamid.S');
      const again = await store.addStatus(status('delivered', { timestamp: 99, receivedAt: T0 + 50 }));
      expect(again.duplicate).toBe(true);
      expect(again.outbound).toMatchObject({ id: 1, deliveryStatus: 'delivered' });
      expect(await store.statuses('wamid.S')).toEqual(before);
      // The same status of another message is not a duplicate.
      expect((await store.addStatus(status('delivered', { providerMessageId: 'wamid.T' }))).duplicate).toBe(false);
    });

    it('only moves forward when statuses arrive in reverse order', async () => {
      const store = await open();
      await sent(store);
      for (const s of ['read', 'delivered', 'sent']) {
        const r = await store.addStatus(status(s));
        expect(r.duplicate).toBe(false);
        expect(r.outbound?.deliveryStatus).toBe('read');
      }
      expect((await store.outbound(1))?.deliveryStatus).toBe('read');
      expect((await store.statuses('wamid.S')).map((s) => s.status)).toEqual(['read', 'delivered', 'sent']);
    });

    it('moves forward in order: sent, delivered, read', async () => {
      const store = await open();
      await sent(store);
      for (const s of ['sent', 'delivered', 'read']) {
        expect((await store.addStatus(status(s))).outbound?.deliveryStatus).toBe(s);
        expect((await store.outbound(1))?.deliveryStatus).toBe(s);
      }
    });

    it('ranks failed highest: nothing moves it back', async () => {
      const store = await open();
      await sent(store);
      await store.addStatus(status('delivered'));
      const failed = await store.addStatus(status('failed', { errors: [{ code: 131026, title: 'Message undeliverable' }] }));
      expect(failed).toMatchObject({ duplicate: false, outbound: { deliveryStatus: 'failed' } });
      await store.addStatus(status('read'));
      expect((await store.outbound(1))?.deliveryStatus).toBe('failed');
      expect((await store.statuses('wamid.S')).find((s) => s.status === 'failed')?.errors).toEqual([{ code: 131026, title: 'Message undeliverable' }]);
    });

    it('keeps an unknown status without changing the row', async () => {
      const store = await open();
      await sent(store);
      await store.addStatus(status('sent'));
      expect((await store.addStatus(status('deleted'))).outbound?.deliveryStatus).toBe('sent');
      expect((await store.outbound(1))?.deliveryStatus).toBe('sent');
      expect((await store.statuses('wamid.S')).map((s) => s.status)).toEqual(['sent', 'deleted']);
    });

    it('keeps a status of an unknown message', async () => {
      const store = await open();
      expect(await store.addStatus(status('read', { providerMessageId: 'wamid.nobody' }))).toEqual({ duplicate: false, outbound: undefined });
      expect(await store.statuses('wamid.nobody')).toHaveLength(1);
      expect(await store.statuses('wamid.other')).toEqual([]);
    });

    it('applies statuses that arrived before the send was recorded', async () => {
      const store = await open();
      await store.commitTurn(turn({ outbox: [text('hi')], now: T0 }));
      const [row] = await claimSends(store);
      // The provider's webhook was faster than our bookkeeping.
      await store.addStatus(status('delivered'));
      await store.addStatus(status('sent'));
      expect((await store.outbound(1))?.deliveryStatus).toBeNull();
      await settleSent(store, row!, { state: 'sent', providerId: 'wamid.S' }, T0 + 2);
      expect(await store.outbound(1)).toMatchObject({ state: 'sent', providerId: 'wamid.S', deliveryStatus: 'delivered' });
      await store.addStatus(status('read'));
      expect((await store.outbound(1))?.deliveryStatus).toBe('read');
    });

    it('takes the highest early status, ignores unknown ones, and none when the finish lost its claim', async () => {
      const store = await open();
      await store.commitTurn(turn({ outbox: [text('a')], now: T0 }));
      await store.commitTurn(turn({ key: BOB, outbox: [text('b')], now: T0 }));
      const [a, b] = await claimSends(store);
      for (const s of ['read', 'failed', 'delivered']) await store.addStatus(status(s));
      await store.addStatus({ ...status('deleted'), providerMessageId: 'wamid.B' });
      await settleSent(store, a!, { state: 'sent', providerId: 'wamid.S' }, T0 + 2);
      expect((await store.outbound(a!.id))?.deliveryStatus).toBe('failed');
      await settleSent(store, b!, { state: 'sent', providerId: 'wamid.B' }, T0 + 2);
      expect(await store.outbound(b!.id)).toMatchObject({ state: 'sent', deliveryStatus: null });
      await store.addStatus({ ...status('read'), providerMessageId: 'wamid.B' });
      expect(await store.settleSend(b!.id, 'lost-claim', { kind: 'sent', record: { state: 'sent', providerId: 'wamid.B' } }, T0 + 3)).toBe(false);
      expect((await store.outbound(b!.id))?.deliveryStatus).toBe('read'); // addStatus applied it; the refused finish changed nothing
    });
  });
});
