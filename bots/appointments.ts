/**
 * Appointments: a list of services → free slots looked up asynchronously → slots as reply buttons
 * with the salon's photo → a confirmation. A reminder goes out when the customer goes quiet, and
 * the held slot is released when they stay quiet.
 */
import { assign, fromPromise, setup } from 'xstate';
import { buttons, defineBot, list, say, template, text, type ColloquyEvent } from 'colloquy';

export const SERVICES = {
  haircut: { title: 'Haircut', minutes: 30 },
  color: { title: 'Color', minutes: 90 },
  manicure: { title: 'Manicure', minutes: 45 },
  pedicure: { title: 'Pedicure', minutes: 60 },
} as const;
export type Service = keyof typeof SERVICES;

export interface Slot {
  readonly id: string;
  readonly label: string;
}
export interface AppointmentContext {
  user: string;
  service?: Service;
  slots: Slot[];
  slot?: Slot;
}

/** Finds free slots for a service (a real bot asks its calendar; tests provide their own). */
export const findSlots = fromPromise(async ({ input }: { input: { service: Service } }): Promise<Slot[]> => {
  await new Promise((r) => setTimeout(r, 50));
  const day = input.service === 'color' ? 'Wed' : 'Tue';
  return [
    { id: 'slot1', label: `${day} 10:00` },
    { id: 'slot2', label: `${day} 13:30` },
    { id: 'slot3', label: `${day} 17:00` },
  ];
});

export const machine = setup({
  types: { context: {} as AppointmentContext, input: {} as { user: string }, events: {} as ColloquyEvent },
  actors: { findSlots },
  delays: { reminder: 10 * 60_000, release: 30 * 60_000 },
}).createMachine({
  id: 'appointments',
  context: ({ input }) => ({ user: input.user, slots: [] }),
  initial: 'service',
  states: {
    service: {
      entry: say(
        list({
          header: 'Studio Nova',
          body: 'Book an appointment: which service?',
          button: 'Services',
          sections: [
            {
              title: 'Hair',
              rows: [
                { id: 'haircut', title: 'Haircut', description: '30 min - $25' },
                { id: 'color', title: 'Color', description: '90 min - $70' },
              ],
            },
            {
              title: 'Nails',
              rows: [
                { id: 'manicure', title: 'Manicure', description: '45 min - $20' },
                { id: 'pedicure', title: 'Pedicure', description: '60 min - $30' },
              ],
            },
          ],
        }),
      ),
      on: {
        'reply.haircut': { target: 'searching', actions: assign({ service: 'haircut' as const }) },
        'reply.color': { target: 'searching', actions: assign({ service: 'color' as const }) },
        'reply.manicure': { target: 'searching', actions: assign({ service: 'manicure' as const }) },
        'reply.pedicure': { target: 'searching', actions: assign({ service: 'pedicure' as const }) },
      },
    },
    searching: {
      invoke: {
        src: 'findSlots',
        input: ({ context }) => ({ service: context.service! }),
        onDone: [
          { guard: ({ event }) => event.output.length === 0, target: 'service', actions: say(text('No free slots this week, sorry. Another service?')) },
          { target: 'slot', actions: assign({ slots: ({ event }) => event.output.slice(0, 3) }) },
        ],
        onError: { target: 'service', actions: say(text('Our calendar is not answering; please try again in a minute.')) },
      },
    },
    slot: {
      entry: say(({ context }) =>
        buttons({
          image: 'https://images.example.com/studio-nova/chair.png',
          body: `${SERVICES[context.service!].title} (${SERVICES[context.service!].minutes} min). Pick a time:`,
          buttons: context.slots.map((s) => ({ id: s.id, title: s.label })),
        }),
      ),
      on: {
        // Slots change every day, so the buttons carry positions (slot1…slot3) rather than times.
        'reply.slot1': { target: 'confirming', guard: ({ context }) => context.slots.length > 0, actions: assign({ slot: ({ context }) => context.slots[0] }) },
        'reply.slot2': { target: 'confirming', guard: ({ context }) => context.slots.length > 1, actions: assign({ slot: ({ context }) => context.slots[1] }) },
        'reply.slot3': { target: 'confirming', guard: ({ context }) => context.slots.length > 2, actions: assign({ slot: ({ context }) => context.slots[2] }) },
      },
    },
    confirming: {
      entry: say(({ context }) =>
        buttons({
          body: `${SERVICES[context.service!].title} on ${context.slot!.label}. Shall I book it?`,
          footer: 'We hold the slot for 30 minutes',
          buttons: [
            { id: 'confirm', title: 'Book it' },
            { id: 'change', title: 'Another time' },
          ],
        }),
      ),
      after: {
        reminder: { actions: say(({ context }) => text(`Reminder: ${context.slot!.label} is still held for you. Tap "Book it" to confirm.`)) },
        release: { target: 'released' },
      },
      on: { 'reply.confirm': 'booked', 'reply.change': 'slot' },
    },
    booked: { type: 'final', entry: say(({ context }) => text(`Booked: ${SERVICES[context.service!].title}, ${context.slot!.label}. See you at Studio Nova!`)) },
    released: { type: 'final', entry: say(text('We released the slot since we did not hear back. Write any time to book again.')) },
  },
});

/**
 * What goes instead of a free-form message once the user's 24-hour window closed (on the Cloud
 * API): a template the sandbox knows (approve your own in WhatsApp Manager). Its "Continue" comes
 * back as \`reply.continue\`, which no state handles: the current prompt is sent again, the window open.
 */
const reopen = template({
  name: 'colloquy_reopen',
  language: 'en_US',
  components: [
    { type: 'body', parameters: [{ type: 'text', text: 'from Studio Nova' }] },
    { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'continue' }] },
  ],
});

/** In `confirming`, a reminder that can still book: its "OK" is `reply.confirm`, which books the slot. */
const stillHeld = template({
  name: 'colloquy_reminder',
  language: 'en_US',
  components: [
    { type: 'body', parameters: [{ type: 'text', text: 'your slot at Studio Nova is still held for you. Tap OK to book it.' }] },
    { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'confirm' }] },
  ],
});

export default defineBot({
  id: 'appointments',
  machine,
  options: { sender: '15550000002', window: { closed: { template: reopen }, states: { confirming: { template: stillHeld } } } },
});
