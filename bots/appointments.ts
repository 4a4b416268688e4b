/**
 * Appointments: a list of services → the two next free slots looked up asynchronously, as reply
 * buttons with the salon's photo, and "Other times" → a live WhatsApp Flow (days, then that day's
 * free times, then a confirmation) answered from this file through the Flow endpoint → booked. A
 * reminder goes out when the customer goes quiet on a held slot, and the slot is released when
 * they stay quiet.
 */
import { assign, fromPromise, setup } from 'xstate';
import { buttons, defineBot, flow, flowComplete, flowError, flowScreen, list, say, template, text, type ColloquyEvent, type FlowRequestInfo } from 'colloquy';

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
  /** The reference of a booking made through the flow. */
  booking?: string;
}

/** The booking flow's id (a real bot: the id WhatsApp Manager gives the published flow). */
export const BOOKING_FLOW_ID = '1029384756';

/** One choice of a flow's dropdown. */
export interface FlowOption {
  readonly id: string;
  readonly title: string;
}

const DAY_NAMES = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** The salon's grid of start times; the calendar takes some of them each day. */
const TIMES = ['09:00', '10:00', '11:30', '13:00', '14:30', '16:00', '17:30'];

/** A day's id (`2026-11-27`, UTC) as its title (`Fri 27 Nov`); undefined when it is not a date. */
export function dayTitle(day: string): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const d = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(+d) || d.toISOString().slice(0, 10) !== day) return undefined;
  return `${DAY_NAMES[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]}`;
}

/** The `count` weekdays after `from` (UTC), as the flow's day choices. */
export function nextWeekdays(from: Date, count = 5): FlowOption[] {
  const out: FlowOption[] = [];
  const d = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()));
  while (out.length < count) {
    d.setUTCDate(d.getUTCDate() + 1);
    if (d.getUTCDay() === 0 || d.getUTCDay() === 6) continue;
    const id = d.toISOString().slice(0, 10);
    out.push({ id, title: dayTitle(id)! });
  }
  return out;
}

/**
 * The free start times of a day: a small deterministic calendar (a real bot asks its own). Two or
 * three of the grid's times are taken each day, which ones depending on the date.
 */
export function freeTimes(day: string): string[] {
  if (dayTitle(day) === undefined) return [];
  const n = Number(day.slice(8, 10));
  return TIMES.filter((_, i) => (i + n) % 3 !== 0);
}

/** Whether `time` is free on `day`. */
export function isFree(day: string, time: string): boolean {
  return freeTimes(day).includes(time);
}

/** Finds free slots for a service (a real bot asks its calendar; tests provide their own). */
export const findSlots = fromPromise(async ({ input }: { input: { service: Service } }): Promise<Slot[]> => {
  await new Promise((r) => setTimeout(r, 50));
  const day = input.service === 'color' ? 'Wed' : 'Tue';
  return [
    { id: 'slot1', label: `${day} 10:00` },
    { id: 'slot2', label: `${day} 13:30` },
  ];
});

/** What the flow's last screen submits, sent to the machine once (a durable turn). */
type BookEvent = { type: 'book'; day: string; time: string };

/**
 * The day and time a booking event asks for: the flow's `book` (its CONFIRM screen, through the
 * Flow endpoint), or a `flow` answer carrying `{ day, slot }` (a Flow JSON whose last screen
 * completes on the phone instead).
 */
function bookingOf(event: ColloquyEvent | BookEvent): { day: string; time: string } | undefined {
  if (event.type === 'book') return { day: event.day, time: event.time };
  if (event.type !== 'flow') return undefined;
  const { day, slot } = event.data;
  return typeof day === 'string' && typeof slot === 'string' ? { day, time: slot } : undefined;
}

export const machine = setup({
  types: { context: {} as AppointmentContext, input: {} as { user: string }, events: {} as ColloquyEvent | BookEvent },
  actors: { findSlots },
  delays: { reminder: 10 * 60_000, release: 30 * 60_000 },
  guards: {
    hasSlot: ({ context }, n: number) => context.slots.length > n,
    stillFree: ({ event }) => {
      const b = bookingOf(event);
      return b !== undefined && isFree(b.day, b.time);
    },
  },
  actions: {
    pickSlot: assign({ slot: ({ context }, n: number) => context.slots[n] }),
    book: assign(({ event }) => {
      const { day, time } = bookingOf(event)!;
      return { slot: { id: `${day} ${time}`, label: `${dayTitle(day)} ${time}` }, booking: `SN-${day.replaceAll('-', '')}-${time.replace(':', '')}` };
    }),
  },
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
          { target: 'slot', actions: assign({ slots: ({ event }) => event.output.slice(0, 2) }) },
        ],
        onError: { target: 'service', actions: say(text('Our calendar is not answering; please try again in a minute.')) },
      },
    },
    slot: {
      entry: say(({ context }) =>
        buttons({
          image: 'https://images.example.com/studio-nova/chair.png',
          body: `${SERVICES[context.service!].title} (${SERVICES[context.service!].minutes} min). Pick a time:`,
          buttons: [...context.slots.map((s) => ({ id: s.id, title: s.label })), { id: 'more', title: 'Other times' }],
        }),
      ),
      on: {
        // Slots change every day, so the buttons carry positions (slot1, slot2) rather than times.
        'reply.slot1': { target: 'confirming', guard: { type: 'hasSlot', params: 0 }, actions: { type: 'pickSlot', params: 0 } },
        'reply.slot2': { target: 'confirming', guard: { type: 'hasSlot', params: 1 }, actions: { type: 'pickSlot', params: 1 } },
        'reply.more': 'picking',
      },
    },
    picking: {
      // A live flow: its screens are answered by `flows.picking` below, through the Flow endpoint.
      entry: say(({ context }) =>
        flow({
          body: `${SERVICES[context.service!].title}: pick a day, then a time.`,
          flowId: BOOKING_FLOW_ID,
          cta: 'See times',
          action: 'data_exchange',
          sms: 'Other times can be picked on WhatsApp, or call us on +1 555 000 0002 and we will find you one.',
        }),
      ),
      on: {
        book: { target: 'booked', guard: 'stillFree', actions: 'book' },
        flow: { target: 'booked', guard: 'stillFree', actions: 'book' },
        // "Other times" again: a fresh form (the one sent before stops opening: 427).
        'reply.more': { target: 'picking', reenter: true },
        // The quick slots still work while the form is open.
        'reply.slot1': { target: 'confirming', guard: { type: 'hasSlot', params: 0 }, actions: { type: 'pickSlot', params: 0 } },
        'reply.slot2': { target: 'confirming', guard: { type: 'hasSlot', params: 1 }, actions: { type: 'pickSlot', params: 1 } },
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

type Info = FlowRequestInfo<AppointmentContext>;
const field = (info: Info, name: string): string => String(info.data[name] ?? '');

/** A day the flow may book: a weekday after `today` (UTC); its title, else undefined. */
function bookable(day: string, today: Date): string | undefined {
  const title = dayTitle(day);
  const weekday = title !== undefined && !title.startsWith('Sat') && !title.startsWith('Sun');
  return weekday && day > today.toISOString().slice(0, 10) ? title : undefined;
}

/** DAYS → SLOTS: the day's free times. */
function slotsOf(info: Info, today: Date) {
  const day = field(info, 'day');
  const title = bookable(day, today);
  if (title === undefined) return flowError('Pick one of the days shown.');
  const times = freeTimes(day);
  if (times.length === 0) return flowError(`Nothing is free on ${title}. Pick another day.`);
  return flowScreen('SLOTS', { day, day_title: title, slots: times.map((t) => ({ id: t, title: t })) });
}

/** SLOTS → CONFIRM, unless the time was taken meanwhile (then the day's free times again, with a message). */
function confirmOf(info: Info, today: Date) {
  const day = field(info, 'day');
  const time = field(info, 'slot');
  const title = bookable(day, today);
  if (title === undefined) return flowError('Pick one of the days shown.');
  if (!isFree(day, time)) {
    return flowError('Sorry, that time was just taken. Pick another one.', { day, day_title: title, slots: freeTimes(day).map((t) => ({ id: t, title: t })) });
  }
  const s = SERVICES[info.context.service ?? 'haircut'];
  return flowScreen('CONFIRM', { day, slot: time, summary: `${s.title} (${s.minutes} min) on ${title} at ${time}` });
}

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

/** What {@link createAppointmentsBot} takes. */
export interface AppointmentsOptions {
  /** The date the flow counts its days from (default: the runtime's clock, the simulated one in tests). */
  readonly today?: (() => Date) | undefined;
}

/** The appointments bot; the default export counts days from the runtime’s clock. */
export function createAppointmentsBot(o: AppointmentsOptions = {}) {
  const today = (info: { readonly now: number }) => o.today?.() ?? new Date(info.now);
  return defineBot({
    id: 'appointments',
    machine,
    options: {
      sender: '15550000002',
      window: { closed: { template: reopen }, states: { confirming: { template: stillHeld } } },
      flows: {
        picking: {
          flowId: BOOKING_FLOW_ID,
          firstScreen: 'DAYS',
          expired: 'These times are out of date. Send us a message to see the free times again.',
          open: (info) => flowScreen('DAYS', { days: nextWeekdays(today(info)) }),
          screens: {
            DAYS: (info) => slotsOf(info, today(info)),
            SLOTS: (info) => confirmOf(info, today(info)),
            // The booking itself: a durable turn (once, however often WhatsApp retries), then the flow closes.
            CONFIRM: {
              event: (info) => ({ type: 'book', day: field(info, 'day'), time: field(info, 'slot') }),
              answer: ({ context }) => (context.booking ? flowComplete({ booking: context.booking }) : flowError('Sorry, that time was just taken. Go back and pick another one.')),
            },
          },
        },
      },
      // How the simulators show the flow's screens (the real Flow JSON lives in WhatsApp Manager).
      flowForms: {
        [BOOKING_FLOW_ID]: {
          title: 'Book a time',
          screens: {
            DAYS: { title: 'Pick a day', fields: [{ name: 'day', label: 'Day', type: 'select', optionsFrom: 'days', required: true }] },
            SLOTS: { title: 'Pick a time', fields: [{ name: 'slot', label: 'Time', type: 'select', optionsFrom: 'slots', required: true }] },
            CONFIRM: { title: 'Confirm', fields: [] },
          },
        },
      },
    },
  });
}

export default createAppointmentsBot();
