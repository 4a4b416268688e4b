/**
 * The `flows` part's bot (bench/flows.ts): a text opens a live flow (`action: 'data_exchange'`)
 * whose screens the state answers from the conversation. Opening shows the days (read only); the
 * `DAYS` submit shows that day's slots (read only); the `CONFIRM` submit is a durable turn: the
 * `book` event goes to the machine, which ends the conversation with one booking text, and the
 * flow completes with the booking's reference. The reference is the one the screen sent, so the
 * load generator knows the exact text each user must receive once.
 */
import { assign, setup } from 'xstate';
import { defineBot, flow, flowComplete, flowScreen, say, text, type ColloquyEvent } from 'colloquy';
import { bookingText, FLOW_BENCH_DAYS } from './flow-shape.js';

/** What the conversation remembers of the booking. */
export interface FlowBenchContext {
  day?: string;
  slot?: string;
  ref?: string;
}

type Ev = ColloquyEvent | { type: 'book'; day: string; slot: string; ref: string };

const machine = setup({ types: { context: {} as FlowBenchContext, events: {} as Ev } }).createMachine({
  id: 'flow-bench',
  initial: 'idle',
  context: {},
  states: {
    idle: { on: { text: 'picking' } },
    picking: {
      entry: say(flow({ body: 'When would you like to come?', flowId: '1234567890', cta: 'See times', action: 'data_exchange' })),
      on: { book: { target: 'booked', actions: assign({ day: ({ event }) => event.day, slot: ({ event }) => event.slot, ref: ({ event }) => event.ref }) } },
    },
    booked: { type: 'final', entry: say(({ context }) => text(bookingText(context.ref ?? '', context.day ?? '', context.slot ?? ''))) },
  },
});

const slotsOf = (day: string) => ['09:00', '10:30', '14:00', '16:30'].map((t) => ({ id: `${day}-${t}`, title: t }));

/** The bench bot (id `flow-bench`). */
export default defineBot({
  id: 'flow-bench',
  machine,
  options: {
    flows: {
      picking: {
        firstScreen: 'DAYS',
        expired: 'This booking form has expired.',
        open: () => flowScreen('DAYS', { days: FLOW_BENCH_DAYS }),
        screens: {
          DAYS: ({ data }) => flowScreen('SLOTS', { day: String(data['day']), slots: slotsOf(String(data['day'])) }),
          CONFIRM: {
            event: ({ data }) => ({ type: 'book', day: String(data['day']), slot: String(data['slot']), ref: String(data['ref']) }),
            answer: ({ context }) => flowComplete({ booking: (context as FlowBenchContext).ref ?? '' }),
          },
        },
      },
    },
  },
});
