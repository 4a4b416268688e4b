/**
 * The store's side of live flows, on both engines: a Flow endpoint submit stored with the turn it
 * ran (the token's latest found, a second one with the same dedupe key losing like a second writer
 * of the turn), the completion mark its `nfm_reply` is checked against, and a turn that moves the
 * conversation to a new flow token.
 */
import { describe, expect, it } from 'vitest';
import { VersionConflictError } from '../../src/errors.js';
import type { NewFlowSubmit, Store } from '../../src/store/types.js';
import { ALICE, BOB, DIALECTS, T0, allOutbound, everything, text, turn } from './helpers.js';

const submit = (over: Partial<NewFlowSubmit> = {}): NewFlowSubmit => ({
  dedupeKey: 'key-days-mon',
  requestKey: 'request-days-mon',
  flowToken: 'ft_alice',
  screen: 'DAYS',
  answer: { screen: 'SLOTS', data: { day: 'mon', slots: [{ id: '0900', title: '09:00' }] } },
  completes: false,
  ...over,
});

/** Alice's conversation, created at version 1 with flow token `ft_alice`. */
async function started(store: Store): Promise<number> {
  const { conversationId } = await store.commitTurn(turn({ flowToken: 'ft_alice', now: T0 }));
  return conversationId;
}

describe.each(DIALECTS)('$name', ({ open }) => {
  describe('flow submits', () => {
    it('stores a submit with its turn and finds it as its token’s latest, answer and all', async () => {
      const store = await open();
      const id = await started(store);
      expect(await store.latestFlowSubmit('ft_alice')).toBeUndefined();
      const result = await store.commitTurn(turn({ conversationId: id, expectedVersion: 1, flowToken: 'ft_alice', outbox: [text('Noted')], flowSubmit: submit(), now: T0 + 5 }));
      expect(result.version).toBe(2);
      expect(await store.latestFlowSubmit('ft_alice')).toEqual({ ...submit(), id: expect.any(Number), conversationId: id, createdAt: T0 + 5 });
      expect(await store.latestFlowSubmit('ft_other')).toBeUndefined();
      expect(await allOutbound(store)).toHaveLength(1);
    });

    it('marks a token completed only by a submit that completes it', async () => {
      const store = await open();
      const id = await started(store);
      await store.commitTurn(turn({ conversationId: id, expectedVersion: 1, flowToken: 'ft_alice', flowSubmit: submit() }));
      expect(await store.flowCompleted('ft_alice')).toBe(false);
      const done = submit({ dedupeKey: 'key-confirm', screen: 'CONFIRM', answer: { screen: 'SUCCESS' }, completes: true });
      await store.commitTurn(turn({ conversationId: id, expectedVersion: 2, flowToken: 'ft_alice', flowSubmit: done }));
      expect(await store.flowCompleted('ft_alice')).toBe(true);
      expect(await store.flowCompleted('ft_other')).toBe(false);
      expect(await store.latestFlowSubmit('ft_alice')).toMatchObject({ dedupeKey: 'key-confirm', completes: true });
    });

    it('refuses a second submit with the same dedupe key as a version conflict, keeping nothing of that turn', async () => {
      const store = await open();
      const id = await started(store);
      await store.commitTurn(turn({ conversationId: id, expectedVersion: 1, flowToken: 'ft_alice', outbox: [text('First')], flowSubmit: submit() }));
      const before = await everything(store);
      // The retry raced the first and read version 2 before it committed: its version check passes, the key does not.
      const again = store.commitTurn(
        turn({
          conversationId: id,
          expectedVersion: 2,
          snapshot: { value: 'again' },
          state: 'again',
          flowToken: 'ft_new',
          flowTokenChanged: true,
          outbox: [text('Second')],
          timers: { upsert: [{ key: 'nudge', stateNode: null, event: { type: 'nudge' }, fireAt: T0 + 60_000 }], remove: [], activeStateNodes: [] },
          flowSubmit: submit({ answer: { screen: 'OTHER' } }),
        }),
      );
      await expect(again).rejects.toBeInstanceOf(VersionConflictError);
      expect(await everything(store)).toEqual(before);
      expect((await store.conversation(id))?.version).toBe(2);
      expect((await allOutbound(store)).map((o) => o.message)).toEqual([{ type: 'text', text: 'First' }]);
      expect(await store.conversationByFlowToken('ft_new')).toBeUndefined();
      expect((await store.latestFlowSubmit('ft_alice'))?.answer).toEqual(submit().answer);
    });

    it('the latest is the newest of a token’s submits, the same request sent again after another one included', async () => {
      const store = await open();
      const id = await started(store);
      const mon = submit();
      const tue = submit({ dedupeKey: 'key-days-tue', requestKey: 'request-days-tue' });
      const monAgain = submit({ dedupeKey: 'key-days-mon-again' });
      for (const [i, f] of [mon, tue, monAgain].entries()) await store.commitTurn(turn({ conversationId: id, expectedVersion: i + 1, flowToken: 'ft_alice', flowSubmit: f }));
      expect(await store.latestFlowSubmit('ft_alice')).toMatchObject({ dedupeKey: 'key-days-mon-again', requestKey: 'request-days-mon' });
    });

    it('keeps submits of other conversations apart', async () => {
      const store = await open();
      const alice = await started(store);
      const { conversationId: bob } = await store.commitTurn(turn({ key: BOB, flowToken: 'ft_bob' }));
      await store.commitTurn(turn({ key: BOB, conversationId: bob, expectedVersion: 1, flowToken: 'ft_bob', flowSubmit: submit({ dedupeKey: 'key-bob', flowToken: 'ft_bob', completes: true }) }));
      expect((await store.latestFlowSubmit('ft_bob'))?.conversationId).toBe(bob);
      expect(await store.flowCompleted('ft_bob')).toBe(true);
      expect(await store.flowCompleted('ft_alice')).toBe(false);
      expect((await store.conversation(alice))?.version).toBe(1);
    });
  });

  describe('a turn that changes the flow token', () => {
    it('moves the conversation to the new token: found by it, no longer by the old one', async () => {
      const store = await open();
      const id = await started(store);
      await store.commitTurn(turn({ conversationId: id, expectedVersion: 1, flowToken: 'ft_second', flowTokenChanged: true }));
      const conv = await store.conversation(id);
      expect(conv).toMatchObject({ ...ALICE, flowToken: 'ft_second', version: 2 });
      expect(await store.conversationByFlowToken('ft_second')).toEqual(conv);
      expect(await store.conversationByFlowToken('ft_alice')).toBeUndefined();
      expect(await store.activeConversation(ALICE)).toEqual(conv);
    });

    it('keeps the token when the turn does not say it changed', async () => {
      const store = await open();
      const id = await started(store);
      await store.commitTurn(turn({ conversationId: id, expectedVersion: 1, flowToken: 'ft_ignored' }));
      expect((await store.conversation(id))?.flowToken).toBe('ft_alice');
      expect((await store.conversationByFlowToken('ft_alice'))?.id).toBe(id);
      expect(await store.conversationByFlowToken('ft_ignored')).toBeUndefined();
    });

    it('changes the token together with a submit, and not at all when the turn loses its version check', async () => {
      const store = await open();
      const id = await started(store);
      await store.commitTurn(turn({ conversationId: id, expectedVersion: 1, flowToken: 'ft_second', flowTokenChanged: true, flowSubmit: submit() }));
      expect((await store.conversationByFlowToken('ft_second'))?.id).toBe(id);
      expect((await store.latestFlowSubmit('ft_alice'))?.dedupeKey).toBe('key-days-mon');
      const stale = store.commitTurn(turn({ conversationId: id, expectedVersion: 1, flowToken: 'ft_third', flowTokenChanged: true, flowSubmit: submit({ dedupeKey: 'key-stale' }) }));
      await expect(stale).rejects.toBeInstanceOf(VersionConflictError);
      expect(await store.conversationByFlowToken('ft_third')).toBeUndefined();
      expect((await store.latestFlowSubmit('ft_alice'))?.dedupeKey).toBe('key-days-mon');
      expect((await store.conversation(id))?.flowToken).toBe('ft_second');
    });
  });
});
