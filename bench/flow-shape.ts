/**
 * What the `flows` part's bot (bench/flow-bot.ts), its baseline and its load generator agree on,
 * apart from the bot so that the orchestrator need not load Colloquy: the days the form offers and
 * the booking text.
 */

/** The days the form offers on opening. */
export const FLOW_BENCH_DAYS = [
  { id: 'mon', title: 'Monday' },
  { id: 'tue', title: 'Tuesday' },
  { id: 'wed', title: 'Wednesday' },
];

/** The booking text the bot sends once per completed flow. */
export const bookingText = (ref: string, day: string, slot: string): string => `Booked ${ref}: ${day} at ${slot}.`;
