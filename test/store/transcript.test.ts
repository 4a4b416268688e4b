import { describe, expect, it } from 'vitest';
import type { Store, TranscriptEntry } from '../../src/store/types.js';
import { ALICE, BOB, DIALECTS, T0, claimSends, inbound, sent, text, turn } from './helpers.js';

/** A transcript as short lines: `in <providerId>` / `out <text>`. */
async function lines(store: Store, conversationId: number): Promise<string[]> {
  return (await store.transcript(conversationId)).map((e) => (e.direction === 'in' ? `in ${e.providerId}` : `out ${(e.record.message as { text: string }).text}`));
}

describe.each(DIALECTS)('$name', ({ open }) => {
  describe('transcript', () => {
    it('interleaves inbound and outbound in commit order when every timestamp is equal', async () => {
      const store = await open();
      let alice = 0;
      let bob = 0;
      const aliceTurn = async (inboxId: number | undefined, ...says: string[]) => {
        await store.commitTurn(turn({ conversationId: alice ? 1 : undefined, expectedVersion: alice, inboxId, outbox: says.map((s) => text(s)), now: T0 }));
        alice++;
      };
      const bobTurn = async (inboxId: number | undefined, ...says: string[]) => {
        await store.commitTurn(turn({ key: BOB, conversationId: bob ? 2 : undefined, expectedVersion: bob, inboxId, outbox: says.map((s) => text(s)), now: T0 }));
        bob++;
      };
      const hear = async (providerId: string, key = ALICE) => (await store.addInbound(inbound({ ...key, providerId, receivedAt: T0 }))).id;

      // Both inbounds arrive before either is processed.
      const a1 = await hear('a1');
      const a2 = await hear('a2');
      await aliceTurn(undefined, 'welcome', 'menu'); // started by the API: no inbound
      await bobTurn(await hear('b1', BOB), 'bob hello');
      await aliceTurn(a1, 'size?');
      await aliceTurn(undefined, 'payment done'); // an invocation settled: no inbound
      await bobTurn(await hear('b2', BOB), 'bob bye');
      await aliceTurn(a2, 'crust?', 'thin or thick');
      await aliceTurn(await hear('a3')); // handled, said nothing
      await store.failOutbound(5, T0, { fallback: text('by sms', { kind: 'sms', channel: 'sms' }) });
      await aliceTurn(await hear('a4'), 'last');

      expect(await lines(store, 1)).toEqual([
        'out welcome',
        'out menu',
        'in a1',
        'out size?',
        'out payment done',
        'in a2',
        'out crust?',
        'out thin or thick',
        'in a3',
        'out by sms',
        'in a4',
        'out last',
      ]);
      expect(await lines(store, 2)).toEqual(['in b1', 'out bob hello', 'in b2', 'out bob bye']);
    });

    it('puts the inbound that started a conversation first', async () => {
      const store = await open();
      const { id } = await store.addInbound(inbound({ providerId: 'first', receivedAt: T0 }));
      await store.commitTurn(turn({ inboxId: id, outbox: [text('hi'), text('menu')], now: T0 }));
      expect(await lines(store, 1)).toEqual(['in first', 'out hi', 'out menu']);
    });

    it('gives the full entries: the inbound as received, the outbound row with its results', async () => {
      const store = await open();
      const { id } = await store.addInbound(inbound({ providerId: 'wamid.in', source: 'whatsapp', event: { type: 'reply.small', id: 'small', title: 'Small', via: 'button' }, receivedAt: T0 + 1 }));
      await store.commitTurn(turn({ inboxId: id, outbox: [text('ok')], now: T0 + 2 }));
      const [row] = await claimSends(store, T0 + 2);
      await sent(store, row!, { state: 'sent', providerId: 'wamid.out', httpStatus: 200 }, T0 + 3);
      await store.addStatus({ providerMessageId: 'wamid.out', status: 'read', receivedAt: T0 + 4 });

      const entries: TranscriptEntry[] = await store.transcript(1);
      expect(entries).toEqual([
        { direction: 'in', at: T0 + 1, source: 'whatsapp', event: { type: 'reply.small', id: 'small', title: 'Small', via: 'button' }, providerId: 'wamid.in', state: 'done', error: null },
        { direction: 'out', at: T0 + 2, record: await store.outbound(1) },
      ]);
      expect(entries[1]).toMatchObject({ record: { state: 'sent', providerId: 'wamid.out', deliveryStatus: 'read', attempts: 1, sentAt: T0 + 3 } });
    });

    it('keeps an expired conversation and its successor apart', async () => {
      const store = await open();
      const old = await store.addInbound(inbound({ providerId: 'old', receivedAt: T0 }));
      await store.commitTurn(turn({ inboxId: old.id, outbox: [text('old reply')], now: T0 }));
      const fresh = await store.addInbound(inbound({ providerId: 'new', receivedAt: T0 }));
      await store.commitTurn(turn({ expire: 1, inboxId: fresh.id, outbox: [text('new reply')], now: T0 }));
      expect(await lines(store, 1)).toEqual(['in old', 'out old reply']);
      expect(await lines(store, 2)).toEqual(['in new', 'out new reply']);
    });

    it('is empty for an unknown conversation', async () => {
      expect(await (await open()).transcript(42)).toEqual([]);
    });
  });
});
