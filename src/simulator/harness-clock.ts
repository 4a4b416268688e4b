/**
 * How a test harness lets time pass: the manual clock steps to each due time the store knows of
 * (timers, sends put back, helpdesk events, idle claims) and the runtime settles there before the
 * next, so each fires at its own time and what it arms fires too if it falls within the advance.
 */
import type { ManualClock } from '../conversation/clock.js';
import type { Runtime } from '../conversation/runtime.js';
import type { Store } from '../store/types.js';
import { formatDuration } from './harness-duration.js';
import { ExpectationError } from './harness-expect.js';

/** More steps than this in one advance: something keeps arming work (a short delay that re-arms itself). */
export const MAX_ADVANCE_STEPS = 100_000;
/** More steps at one instant than this: work due now keeps arming work due now (`after: { 0: … }` that re-enters). */
export const MAX_STEPS_AT_ONE_TIME = 200;

/** What {@link advanceInSteps} moves and waits for. */
export interface Timed {
  readonly clock: ManualClock;
  readonly runtime: Runtime;
  readonly store: Store;
  readonly botId: string;
}

/**
 * Moves `clock` forward by `ms`: to each due time within it in turn (one due exactly at the end
 * included), letting the runtime take what fell due and settle before looking for the next; then to
 * the end. Throws an {@link ExpectationError} naming what keeps re-arming when it takes more than
 * `limits.steps` due times, or more than `limits.atOnce` at one instant.
 */
export async function advanceInSteps(t: Timed, ms: number, limits: { readonly steps?: number; readonly atOnce?: number } = {}): Promise<void> {
  const { steps: maxSteps = MAX_ADVANCE_STEPS, atOnce: maxAtOnce = MAX_STEPS_AT_ONE_TIME } = limits;
  const { clock, runtime, store } = t;
  const end = clock.now() + ms;
  let steps = 0;
  let atOnce = 0;
  for (;;) {
    await runtime.idle();
    const next = await store.nextDue();
    if (next === undefined || next > end) break;
    const at = Math.max(next, clock.now());
    atOnce = at === clock.now() && steps > 0 ? atOnce + 1 : 0;
    if (atOnce >= maxAtOnce) throw await endless(t, at, `what fell due then was still due after ${atOnce} runs at that instant`);
    if (++steps > maxSteps) throw await endless(t, at, `it took more than ${maxSteps} due times (it reached ${iso(at)}, ${formatDuration(end - at)} before its end)`);
    clock.advance(at - clock.now());
    await runtime.poke();
  }
  clock.advance(end - clock.now());
  await runtime.poke();
}

/** The error of an advance that never ends, naming the timers due by `at`, where it stopped (the usual culprits). */
async function endless(t: Timed, at: number, why: string): Promise<ExpectationError> {
  const due: string[] = [];
  for (const c of await t.store.conversations({ botId: t.botId, status: 'active' })) {
    for (const timer of await t.store.timers(c.id)) {
      if (timer.fireAt > at) continue;
      const where = timer.stateNode ?? c.state ?? '(unknown state)';
      const event = timer.event.type === timer.key ? '' : ` (${timer.event.type})`;
      due.push(`timer ${JSON.stringify(timer.key)}${event} armed in state ${JSON.stringify(where)} of the conversation with ${c.user}`);
    }
  }
  const what = due.length ? `Due then and re-armed as it fires: ${due.join('; ')}.` : 'No timer is due then: a send, a helpdesk event or an idle claim stays due without being taken.';
  return new ExpectationError(`advance() stopped at ${iso(at)}: ${why}. Something keeps re-arming itself (a delay that re-enters its own state). ${what}`);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
