import { describe, expect, it } from 'vitest';
import { StoreError, VersionConflictError } from '../../src/errors.js';
import type { TurnCommit } from '../../src/store/types.js';
import { ALICE, BOB, DIALECTS, NO_TIMERS, T0, allOutbound, everything, inbound, nextPending, text, turn } from './helpers.js';

async function conflict(p: Promise<unknown>): Promise<VersionConflictError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VersionConflictError);
  expect(err).toBeInstanceOf(StoreError);
  expect((err as VersionConflictError).code).toBe('version_conflict');
  return err as VersionConflictError;
}

const timer = (key: string, stateNode: string | null, fireAt: number) => ({ key, stateNode, event: { type: `xstate.after.${key}` }, fireAt });

describe.each(DIALECTS)('$name', ({ open, fresh }) => {
  describe('commitTurn: creating a conversation', () => {
    it('creates it at version 1 with its snapshot, outbox rows and the consumed inbound', async () => {
      const store = await open();
      const { id: inboxId } = await store.addInbound(inbound({ providerId: 'wamid.1', receivedAt: T0 }));
      const result = await store.commitTurn(
        turn({
          snapshot: { value: 'menu', context: { size: null } },
          state: 'menu',
          flowToken: 'ft_alice',
          inboxId,
          lastPrompt: [{ type: 'buttons', body: 'Size?' }],
          outbox: [text('Hi'), text('Size?', { kind: 'buttons' })],
          now: T0 + 1,
        }),
      );
      expect(result).toMatchObject({ conversationId: 1, version: 1, outboxIds: [1, 2] });

      const conv = await store.conversation(1);
      expect(conv).toEqual({
        id: 1,
        ...ALICE,
        status: 'active',
        snapshot: { value: 'menu', context: { size: null } },
        state: 'menu',
        version: 1,
        botVersion: 1,
        flowToken: 'ft_alice',
        channel: 'interactive',
        lastPrompt: [{ type: 'buttons', body: 'Size?' }],
        createdAt: T0 + 1,
        updatedAt: T0 + 1,
        lastActivityAt: T0 + 1,
        endedAt: null,
      });
      expect(await store.activeConversation(ALICE)).toEqual(conv);
      expect(await store.conversationByFlowToken('ft_alice')).toEqual(conv);
      expect(await store.conversationByFlowToken('ft_nobody')).toBeUndefined();
      expect(await store.inbound(inboxId)).toMatchObject({ state: 'done', conversationId: 1, attempts: 1, processedAt: T0 + 1, error: null });

      expect(await store.outbound(1)).toEqual({
        id: 1,
        conversationId: 1,
        ...ALICE,
        inboxId,
        kind: 'text',
        message: { type: 'text', text: 'Hi' },
        channel: 'interactive',
        request: { text: { body: 'Hi' } },
        state: 'pending',
        attempts: 0,
        nextAttemptAt: T0 + 1,
        providerId: null,
        httpStatus: null,
        response: null,
        smsCode: null,
        smsMailingId: null,
        smsResult: null,
        error: null,
        errorCode: null,
        fallbackOf: null,
        deliveryStatus: null,
        claim: null,
        resends: 0,
        createdAt: T0 + 1,
        sentAt: null,
      });
      expect((await store.outbound(2))?.kind).toBe('buttons');
    });

    it('creates on the SMS channel when asked', async () => {
      const store = await open();
      await store.commitTurn(turn({ channel: 'sms' }));
      expect((await store.conversation(1))?.channel).toBe('sms');
    });

    it('keeps flow tokens unique', async () => {
      const store = await open();
      await store.commitTurn(turn({ flowToken: 'ft_same' }));
      const before = await everything(store);
      await conflict(store.commitTurn(turn({ key: BOB, flowToken: 'ft_same', outbox: [text('x')] })));
      expect(await everything(store)).toEqual(before);
    });

    it('refuses a second active conversation for the same bot and user, committing nothing', async () => {
      const store = await open();
      await store.commitTurn(turn({ now: T0 }));
      const { id: inboxId } = await store.addInbound(inbound({ providerId: 'wamid.race' }));
      const before = await everything(store);

      const err = await conflict(store.commitTurn(turn({ inboxId, outbox: [text('a second hello')], timers: { ...NO_TIMERS, upsert: [timer('t', null, T0 + 1)] } })));
      expect(err.conversationId).toBe(0);
      expect(await everything(store)).toEqual(before);
      expect((await store.inbound(inboxId))?.state).toBe('pending');

      // Another user, or another bot, is a separate conversation.
      // (A refused insert may use up an id on PostgreSQL: ids only grow, they are not dense.)
      const bob = (await store.commitTurn(turn({ key: BOB }))).conversationId;
      const quiz = (await store.commitTurn(turn({ key: { botId: 'quiz', user: ALICE.user } }))).conversationId;
      expect(bob).toBeGreaterThan(1);
      expect(quiz).toBeGreaterThan(bob);
      expect((await store.conversations({ status: 'active' })).map((c) => c.id)).toEqual([1, bob, quiz]);
    });

    it('records a conversation that ends in its first turn as done', async () => {
      const store = await open();
      await store.commitTurn(turn({ status: 'done', state: 'bye', now: T0 + 3 }));
      expect(await store.conversation(1)).toMatchObject({ status: 'done', endedAt: T0 + 3, version: 1 });
      expect(await store.activeConversation(ALICE)).toBeUndefined();
    });
  });

  describe('commitTurn: updating a conversation', () => {
    it('increments the version on each commit from the right version', async () => {
      const store = await open();
      await store.commitTurn(turn({ now: T0, lastPrompt: [{ p: 1 }], flowToken: 'ft_first' }));
      const base = { conversationId: 1, flowToken: 'ignored-on-update' } as const;

      const r2 = await store.commitTurn(turn({ ...base, expectedVersion: 1, snapshot: { value: 'size' }, state: 'size', outbox: [text('Size?')], now: T0 + 10 }));
      expect(r2).toMatchObject({ conversationId: 1, version: 2, outboxIds: [1] });
      const r3 = await store.commitTurn(turn({ ...base, expectedVersion: 2, snapshot: { value: 'crust' }, state: 'crust', now: T0 + 20, userActivity: false, lastPrompt: [{ p: 3 }], channel: 'sms' }));
      expect(r3).toMatchObject({ conversationId: 1, version: 3, outboxIds: [] });

      expect(await store.conversation(1)).toMatchObject({
        version: 3,
        snapshot: { value: 'crust' },
        state: 'crust',
        status: 'active',
        channel: 'sms',
        lastPrompt: [{ p: 3 }],
        createdAt: T0,
        updatedAt: T0 + 20,
        lastActivityAt: T0 + 10,
        endedAt: null,
        flowToken: 'ft_first',
      });
    });

    it('moves to the bot version a turn gives, keeps it when a turn gives none, and ends on the same version', async () => {
      const store = await open();
      await store.commitTurn(turn({ botVersion: 1 }));
      const base = { conversationId: 1 } as const;
      expect(await store.commitTurn(turn({ ...base, expectedVersion: 1, botVersion: 1, now: T0 + 1 }))).toMatchObject({ version: 2 });
      expect(await store.commitTurn(turn({ ...base, expectedVersion: 2, botVersion: 2, now: T0 + 2 }))).toMatchObject({ version: 3 });
      expect(await store.conversation(1)).toMatchObject({ botVersion: 2, status: 'active', version: 3, updatedAt: T0 + 2 });
      await store.commitTurn(turn({ ...base, expectedVersion: 3, botVersion: undefined, now: T0 + 3 }));
      expect(await store.activeConversation(ALICE)).toMatchObject({ id: 1, botVersion: 2, version: 4 });
      await store.commitTurn(turn({ ...base, expectedVersion: 4, botVersion: 2, status: 'done', state: 'bye', now: T0 + 4 }));
      expect(await store.conversation(1)).toMatchObject({ botVersion: 2, status: 'done', state: 'bye', version: 5, endedAt: T0 + 4 });
      expect(await store.activeConversation(ALICE)).toBeUndefined();
      await conflict(store.commitTurn(turn({ ...base, expectedVersion: 4, botVersion: 2 })));
      expect(await store.conversation(1)).toMatchObject({ status: 'done', version: 5 });
    });

    it('keeps the prompt and the channel when a turn leaves them undefined', async () => {
      const store = await open();
      await store.commitTurn(turn({ lastPrompt: [{ p: 'kept' }], channel: 'sms' }));
      await store.commitTurn(turn({ conversationId: 1, expectedVersion: 1 }));
      expect(await store.conversation(1)).toMatchObject({ lastPrompt: [{ p: 'kept' }], channel: 'sms', version: 2 });
    });

    it('refuses a stale version and commits NOTHING of that turn', async () => {
      const store = await open();
      const { id: first } = await store.addInbound(inbound({ providerId: 'w1' }));
      await store.commitTurn(turn({ inboxId: first, outbox: [text('hi')], timers: { ...NO_TIMERS, upsert: [timer('keep', 'bot.menu', T0 + 100)] } }));
      await store.commitTurn(turn({ conversationId: 1, expectedVersion: 1, timers: { ...NO_TIMERS, activeStateNodes: ['bot.menu'] }, now: T0 + 1 }));
      await store.commitTurn(turn({ key: BOB }));
      const { id: inboxId } = await store.addInbound(inbound({ providerId: 'w2' }));
      const before = await everything(store);

      const err = await conflict(
        store.commitTurn(
          turn({
            conversationId: 1,
            expectedVersion: 1,
            inboxId,
            status: 'done',
            snapshot: { value: 'lost' },
            state: 'lost',
            expire: 2,
            outbox: [text('never sent'), text('nor this')],
            timers: { upsert: [timer('new', null, T0 + 5)], remove: ['keep'], activeStateNodes: [] },
            now: T0 + 50,
          }),
        ),
      );
      expect(err.conversationId).toBe(1);
      expect(err.expected).toBe(1);
      expect(err.message).toContain('Conversation 1');
      expect(await everything(store)).toEqual(before);
      expect(await store.conversation(1)).toMatchObject({ version: 2, status: 'active' });
      expect(await store.conversation(2)).toMatchObject({ status: 'active' });
      expect(await store.timers(1)).toEqual([timer('keep', 'bot.menu', T0 + 100)]);
      expect((await store.inbound(inboxId))?.state).toBe('pending');
    });

    it('refuses a version from the future and an unknown conversation', async () => {
      const store = await open();
      await store.commitTurn(turn());
      await conflict(store.commitTurn(turn({ conversationId: 1, expectedVersion: 2 })));
      await conflict(store.commitTurn(turn({ conversationId: 99, expectedVersion: 1 })));
      expect((await store.conversation(1))?.version).toBe(1);
    });

    it('refuses a turn whose inbound was already consumed by another writer', async () => {
      const store = await open();
      const { id: inboxId } = await store.addInbound(inbound({ providerId: 'w1' }));
      // Two processes both picked up w1 for a new conversation; the first one won.
      await store.commitTurn(turn({ inboxId, outbox: [text('hello once')] }));
      const before = await everything(store);
      // The loser retries on the now-existing conversation with the same inbound: it must not run twice.
      await conflict(store.commitTurn(turn({ conversationId: 1, expectedVersion: 1, inboxId, outbox: [text('hello twice')] })));
      expect(await everything(store)).toEqual(before);
    });
  });

  describe('commitTurn: ending and expiring', () => {
    it('deletes the timers of a conversation that ends, and lets a new one start', async () => {
      const store = await open();
      await store.commitTurn(turn({ timers: { ...NO_TIMERS, upsert: [timer('a', 'bot.menu', T0 + 10), timer('b', null, T0 + 20)] } }));
      await store.commitTurn(turn({ key: BOB, timers: { ...NO_TIMERS, upsert: [timer('a', null, T0 + 30)] } }));
      expect(await store.timers(1)).toHaveLength(2);

      const r = await store.commitTurn(
        turn({ conversationId: 1, expectedVersion: 1, status: 'done', state: 'bye', timers: { ...NO_TIMERS, upsert: [timer('late', null, T0 + 40)], activeStateNodes: ['bot.menu'] }, now: T0 + 5 }),
      );
      expect(r.version).toBe(2);
      expect(await store.timers(1)).toEqual([]);
      expect(await store.timers(2)).toEqual([timer('a', null, T0 + 30)]);
      expect(await store.conversation(1)).toMatchObject({ status: 'done', endedAt: T0 + 5, updatedAt: T0 + 5 });
      expect(await store.activeConversation(ALICE)).toBeUndefined();

      const next = await store.commitTurn(turn({ flowToken: 'ft_second', now: T0 + 6 }));
      expect(next).toMatchObject({ conversationId: 3, version: 1, outboxIds: [] });
      expect((await store.activeConversation(ALICE))?.id).toBe(3);
      expect((await store.conversations({ ...ALICE })).map((c) => [c.id, c.status])).toEqual([
        [1, 'done'],
        [3, 'active'],
      ]);
      expect((await store.conversations({ status: 'active' })).map((c) => c.id)).toEqual([2, 3]);
      expect((await store.conversations()).map((c) => c.id)).toEqual([1, 2, 3]);
    });

    it('also ends a conversation on status failed', async () => {
      const store = await open();
      await store.commitTurn(turn({ timers: { ...NO_TIMERS, upsert: [timer('a', null, T0 + 10)] } }));
      await store.commitTurn(turn({ conversationId: 1, expectedVersion: 1, status: 'failed', now: T0 + 9 }));
      expect(await store.conversation(1)).toMatchObject({ status: 'failed', endedAt: T0 + 9 });
      expect(await store.timers(1)).toEqual([]);
      expect(await store.nextDue()).toBeUndefined();
    });

    it('marks the conversation to expire as expired and starts the new one in the same commit', async () => {
      const store = await open();
      await store.commitTurn(turn({ flowToken: 'ft_old', timers: { ...NO_TIMERS, upsert: [timer('remind', 'bot.menu', T0 + 10)] }, now: T0 }));
      const { id: inboxId } = await store.addInbound(inbound({ providerId: 'w-after-idle' }));

      const r = await store.commitTurn(turn({ expire: 1, inboxId, flowToken: 'ft_new', outbox: [text('Welcome back')], now: T0 + 86_400_000 }));
      expect(r).toMatchObject({ conversationId: 2, version: 1, outboxIds: [1] });
      expect(await store.conversation(1)).toMatchObject({ status: 'expired', endedAt: T0 + 86_400_000, updatedAt: T0 + 86_400_000, version: 2 }); // expiring bumps the version, so a turn racing it retries
      expect(await store.timers(1)).toEqual([]);
      expect(await store.activeConversation(ALICE)).toMatchObject({ id: 2, flowToken: 'ft_new' });
      expect(await store.inbound(inboxId)).toMatchObject({ state: 'done', conversationId: 2 });
    });

    it('does not re-expire a conversation that already ended', async () => {
      const store = await open();
      await store.commitTurn(turn({ status: 'done', now: T0 }));
      await store.commitTurn(turn({ expire: 1, now: T0 + 100 }));
      expect(await store.conversation(1)).toMatchObject({ status: 'done', endedAt: T0 });
    });
  });

  describe('expireIdle, setChannel, activeConversationIds', () => {
    it('expires only active conversations of that bot idle since before the cut-off, deleting their timers', async () => {
      const store = await open();
      const withTimer = { ...NO_TIMERS, upsert: [timer('t', null, T0 + 1_000)] };
      await store.commitTurn(turn({ now: T0, timers: withTimer })); // 1: idle
      await store.commitTurn(turn({ key: BOB, now: T0 + 500, timers: withTimer })); // 2: recent
      await store.commitTurn(turn({ key: { botId: 'quiz', user: ALICE.user }, now: T0 })); // 3: other bot
      await store.commitTurn(turn({ key: { ...ALICE, user: '+3' }, status: 'done', now: T0 })); // 4: already done
      // Activity is the user's: a timer turn does not refresh it.
      await store.commitTurn(turn({ key: BOB, conversationId: 2, expectedVersion: 1, userActivity: false, now: T0 + 900, timers: NO_TIMERS }));

      expect(await store.expireIdle('pizza', T0 + 500, T0 + 1_000)).toBe(1);
      expect(await store.conversation(1)).toMatchObject({ status: 'expired', endedAt: T0 + 1_000 });
      expect(await store.conversation(2)).toMatchObject({ status: 'active', lastActivityAt: T0 + 500 });
      expect(await store.conversation(3)).toMatchObject({ status: 'active' });
      expect(await store.conversation(4)).toMatchObject({ status: 'done' });
      expect(await store.timers(1)).toEqual([]);
      expect(await store.timers(2)).toHaveLength(1);
      expect(await store.expireIdle('pizza', T0 + 501, T0 + 2_000)).toBe(1);
      expect(await store.expireIdle('pizza', T0 + 10_000, T0 + 3_000)).toBe(0);
    });

    it('switches the channel as a failure follow-up', async () => {
      const store = await open();
      await store.commitTurn(turn({ now: T0, outbox: [text('a')] }));
      await store.failOutbound(1, T0 + 4, { channel: 'sms' });
      expect(await store.conversation(1)).toMatchObject({ channel: 'sms', updatedAt: T0 + 4, version: 1 });
      await store.failOutbound(1, T0 + 5, { channel: 'interactive' });
      expect((await store.conversation(1))?.channel).toBe('interactive');
    });

    it('lists active conversations whose snapshot has running children', async () => {
      const store = await open();
      await store.commitTurn(turn({ snapshot: { value: 'menu', children: {} } }));
      await store.commitTurn(turn({ key: BOB, snapshot: { value: 'paying', children: { pay: { snapshot: {} } } } }));
      await store.commitTurn(turn({ key: { ...ALICE, user: '+3' }, status: 'done', snapshot: { value: 'x', children: { pay: {} } } }));
      expect(await store.activeConversationIds()).toEqual([2]);
    });
  });

  describe('two store instances on one file (two processes)', () => {
    it('the first commit from version N wins; the second gets a conflict and commits nothing', async () => {
      const where = await fresh();
      const one = await open(where);
      const two = await open(where);

      await one.commitTurn(turn({ now: T0 }));
      const { id: inboxId } = await one.addInbound(inbound({ providerId: 'wamid.both' }));
      // Both processes load the same inbound and version 1.
      const seenByOne = await one.activeConversation(ALICE);
      const seenByTwo = await two.activeConversation(ALICE);
      expect(seenByOne?.version).toBe(1);
      expect(seenByTwo?.version).toBe(1);
      expect((await nextPending(two, ALICE))?.id).toBe(inboxId);

      const commit = (snapshot: string): TurnCommit => turn({ conversationId: 1, expectedVersion: 1, inboxId, snapshot: { value: snapshot }, state: snapshot, outbox: [text(snapshot)], now: T0 + 1 });
      expect(await one.commitTurn(commit('one'))).toMatchObject({ conversationId: 1, version: 2, outboxIds: [1] });
      await conflict(two.commitTurn(commit('two')));

      for (const s of [one, two]) {
        expect(await s.conversation(1)).toMatchObject({ version: 2, state: 'one', snapshot: { value: 'one' } });
        expect((await allOutbound(s)).map((r) => r.message)).toEqual([{ type: 'text', text: 'one' }]);
      }
      // The loser reloads and commits from version 2.
      expect((await two.commitTurn(turn({ conversationId: 1, expectedVersion: 2, now: T0 + 2 }))).version).toBe(3);
      expect((await one.conversation(1))?.version).toBe(3);
    });

    it('only one of two processes creates the conversation', async () => {
      const where = await fresh();
      const one = await open(where);
      const two = await open(where);
      await one.commitTurn(turn({ flowToken: 'ft_one' }));
      await conflict(two.commitTurn(turn({ flowToken: 'ft_two' })));
      expect((await two.conversations()).map((c) => c.flowToken)).toEqual(['ft_one']);
    });
  });
});
