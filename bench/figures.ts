/**
 * Percentiles, rounding and the summary of closed-loop rounds, shared by every part of the bench.
 */
import type { PhaseResult, RoundResult } from './load.js';

/** The p-th percentile (nearest rank) of `values`; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Rounding to 0–3 decimals; NaN and infinities become null so that the JSON line stays valid and says "none". */
const rounder =
  (digits: number) =>
  (x: number): number =>
    Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : (null as unknown as number);
export const r0 = rounder(0);
export const r1 = rounder(1);
export const r2 = rounder(2);
export const r3 = rounder(3);

/** Users per second of a phase: users ÷ (first webhook sent → last reply accepted). */
export const rate = (p: PhaseResult): number => p.users / (p.acceptedMs / 1000);
/** Turns per second of a round (both phases). */
export const roundRate = (r: RoundResult): number => (r.fresh.users + r.existing.users) / ((r.fresh.acceptedMs + r.existing.acceptedMs) / 1000);

/** The figures of several closed-loop rounds of one side: the best round's rate, percentiles over all. */
export function summarize(rounds: readonly RoundResult[]) {
  const best = rounds.reduce((a, b) => (roundRate(b) > roundRate(a) ? b : a));
  const all = (f: (p: PhaseResult) => number[], which?: 'fresh' | 'existing') => rounds.flatMap((r) => (which ? f(r[which]) : [...f(r.fresh), ...f(r.existing)]));
  return {
    turnsPerS: roundRate(best),
    freshPerS: Math.max(...rounds.map((r) => rate(r.fresh))),
    existingPerS: Math.max(...rounds.map((r) => rate(r.existing))),
    answersPerS: Math.max(...rounds.map((r) => (r.fresh.users + r.existing.users) / ((r.fresh.answersMs + r.existing.answersMs) / 1000))),
    perRound: rounds.map((r) => r0(roundRate(r))),
    webhook: {
      p50: percentile(
        all((p) => p.webhookMs),
        50,
      ),
      p99: percentile(
        all((p) => p.webhookMs),
        99,
      ),
      max: percentile(
        all((p) => p.webhookMs),
        100,
      ),
    },
    webhookFresh: {
      p50: percentile(
        all((p) => p.webhookMs, 'fresh'),
        50,
      ),
      p99: percentile(
        all((p) => p.webhookMs, 'fresh'),
        99,
      ),
    },
    webhookExisting: {
      p50: percentile(
        all((p) => p.webhookMs, 'existing'),
        50,
      ),
      p99: percentile(
        all((p) => p.webhookMs, 'existing'),
        99,
      ),
    },
    turn: {
      p50: percentile(
        all((p) => p.turnMs),
        50,
      ),
      p99: percentile(
        all((p) => p.turnMs),
        99,
      ),
    },
    turnFresh: {
      p50: percentile(
        all((p) => p.turnMs, 'fresh'),
        50,
      ),
      p99: percentile(
        all((p) => p.turnMs, 'fresh'),
        99,
      ),
    },
    turnExisting: {
      p50: percentile(
        all((p) => p.turnMs, 'existing'),
        50,
      ),
      p99: percentile(
        all((p) => p.turnMs, 'existing'),
        99,
      ),
    },
    redeliveries: rounds.reduce((n, r) => n + r.fresh.redeliveries + r.existing.redeliveries, 0),
    /** The best round's lag: last webhook answered → last outbound accepted, ms (new + existing). */
    drainMs: best.fresh.acceptedMs - best.fresh.answersMs + best.existing.acceptedMs - best.existing.answersMs,
  };
}
