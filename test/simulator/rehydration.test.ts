/**
 * `checkRehydration()`: a bot run in memory, through the store, and through the store with a new
 * runtime at every step must agree; when it does not, the error names the step and what differs.
 */
import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { buttons, defineBot, say, text, type ColloquyEvent } from 'colloquy';
import { checkRehydration, DEFAULT_TEST_USER, ExpectationError, RehydrationMismatchError, type RehydrationStep } from 'colloquy/testing';
import orderBot from '../fixtures/order-bot.js';

const tap = (id: string, title: string, via: 'list' | 'button' = 'button') => ({ event: { type: `reply.${id}`, id, title, via } });
const hi = { event: { type: 'text', text: 'hi', via: 'whatsapp' } };

/** A bot that keeps a non-JSON value in context, assigned on a tap and read on the next. */
function keeping(value: () => unknown, show: (v: unknown) => string) {
  const machine = setup({ types: { context: {} as { user: string; kept?: unknown }, input: {} as { user: string }, events: {} as ColloquyEvent } }).createMachine({
    id: 'keeping',
    context: ({ input }) => ({ user: input.user }),
    initial: 'asking',
    states: {
      asking: {
        entry: say(buttons({ body: 'When?', buttons: [{ id: 'tomorrow', title: 'Tomorrow' }] })),
        on: { 'reply.tomorrow': { target: 'confirming', actions: assign({ kept: value }) } },
      },
      confirming: {
        entry: say(buttons({ body: 'Book it?', buttons: [{ id: 'yes', title: 'Yes' }] })),
        on: { 'reply.yes': 'booked' },
      },
      booked: { type: 'final', entry: say(({ context }) => text(`Booked: ${show(context.kept)}`)) },
    },
  });
  return defineBot({ id: 'keeping', machine });
}
const KEEPING_STEPS: RehydrationStep[] = [hi, tap('tomorrow', 'Tomorrow'), tap('yes', 'Yes')];

async function failure(p: Promise<unknown>): Promise<RehydrationMismatchError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(RehydrationMismatchError);
  expect(err).toBeInstanceOf(ExpectationError);
  return err as RehydrationMismatchError;
}

describe('checkRehydration', () => {
  it('passes for the order bot on a path with a lookup, a stale tap, a timer and the flow', async () => {
    const steps: RehydrationStep[] = [
      hi,
      tap('status', 'Order status', 'list'), // the lookup, then the menu again
      tap('margherita', 'Margherita', 'list'),
      { ...tap('pepperoni', 'Pepperoni', 'list'), reprompts: 2 }, // stale tap: the sizes again
      { advance: '10m' }, // "Still there? Starting over." and the menu
      tap('pepperoni', 'Pepperoni', 'list'),
      tap('large', 'Large'),
      { flow: { address: 'Via Roma 1' } },
    ];
    const { memory, straight, restarted } = await checkRehydration(orderBot, steps, { busy: ['checking'] });
    expect(memory.states).toEqual(['menu', 'menu', 'size', 'size', 'menu', 'size', 'address', 'done']);
    expect(memory.said[3]).toEqual([]); // the machine alone knows nothing of re-prompts
    for (const run of [straight, restarted]) {
      expect(run.states).toEqual(memory.states);
      expect(run.said[3]).toEqual(run.said[2]);
      expect(run.said[4]!.map((m) => m.kind)).toEqual(['text', 'list']);
      expect(run.final).toEqual({ state: 'done', status: 'done', context: { user: DEFAULT_TEST_USER, item: 'pepperoni', size: 'large', address: 'Via Roma 1' } });
    }
    expect(restarted.requests).toEqual(straight.requests);
    expect(straight.requests).toHaveLength(10); // list, status, list, sizes, sizes again, nudge, list, sizes, flow, thanks
  });

  it('fails at the step that put a Date in context, naming the field and both values', async () => {
    const at = new Date(Date.UTC(2026, 0, 2, 9));
    const bot = keeping(
      () => new Date(at),
      (v) => (v as Date).toISOString(),
    );
    const err = await failure(checkRehydration(bot, KEEPING_STEPS));
    expect(err.step).toBe(1);
    expect(err.message).toContain('Rehydration check failed at steps[1], tap "Tomorrow" (reply.tomorrow):');
    expect(err.message).toContain('- through the store and restarted at every step: context.kept is "2026-01-02T09:00:00.000Z" (in memory a Date (2026-01-02T09:00:00.000Z))');
    expect(err.message).toContain('The store keeps the context as JSON');
    expect(err.runs.memory.states).toEqual(['asking', 'confirming', 'booked']);
  });

  it('fails at the step that put a Map in context', async () => {
    const bot = keeping(
      () => new Map([['size', 'large']]),
      (v) => String((v as Map<string, string>).get('size')),
    );
    const err = await failure(checkRehydration(bot, KEEPING_STEPS));
    expect(err.step).toBe(1);
    expect(err.message).toContain('at steps[1], tap "Tomorrow" (reply.tomorrow):');
    expect(err.message).toContain('context.kept is {} (in memory a Map with 1 entry)');
  });

  it('fails when a step marked reprompts says something else', async () => {
    const steps: RehydrationStep[] = [hi, tap('margherita', 'Margherita', 'list'), { ...tap('pepperoni', 'Pepperoni', 'list'), reprompts: 0 }];
    const err = await failure(checkRehydration(orderBot, steps));
    expect(err.step).toBe(2);
    expect(err.message).toContain('at steps[2], tap "Pepperoni" (reply.pepperoni):');
    expect(err.message).toMatch(/the bot said\n {4}1\. buttons image=\S+ "Which size of margherita\?"[^\n]*\n {2}but it should re-send what steps\[0\] said:\n {4}1\. list header="Pizza Place"/);
  });

  it('refuses a reprompts that names no earlier step, before running anything', async () => {
    await expect(checkRehydration(orderBot, [{ ...hi, reprompts: 0 }])).rejects.toThrow('steps[0].reprompts must be the index of an earlier step (got 0)');
  });
});
