/**
 * What `checkRehydration()` compares, and how it says what differs: the first step where the
 * runs disagree on the state, on what the bot said or on the context, then the end.
 */
import type { Message } from '../messages/message.js';
import type { SentMessage } from './harness-sent.js';
import { formatDuration } from './harness-duration.js';
import type { RehydrationRuns, RehydrationStep } from './rehydration-types.js';
import { sentLine, templateLine } from './transcript-lines.js';

/** The first disagreement between the runs, as a readable message, or undefined when they agree. */
export function findMismatch(steps: readonly RehydrationStep[], runs: RehydrationRuns): { message: string; step: number | undefined } | undefined {
  const { memory, straight, restarted } = runs;
  const stores = [
    ['through the store', straight],
    ['restarted at every step', restarted],
  ] as const;
  for (const [i, s] of steps.entries()) {
    const r = 'event' in s ? s.reprompts : undefined;
    const found = merge(
      stores.map(
        ([name, run]) =>
          [
            name,
            [
              ...(run.states[i] === memory.states[i] ? [] : [`the state is ${q(run.states[i])} (in memory ${q(memory.states[i])})`]),
              ...saidProblem(run.said[i] ?? [], r === undefined ? (memory.said[i] ?? []) : (run.said[r] ?? []), r),
              ...contextProblem(memory.contexts[i], run.contexts[i]),
            ],
          ] as const,
      ),
    );
    if (found.length) return { message: `Rehydration check failed at steps[${i}], ${stepLabel(s)}:\n${found.join('\n')}`, step: i };
  }
  const end = merge(
    stores.map(
      ([name, run]) =>
        [
          `${name}, at the end (read from a fresh connection)`,
          [
            ...(run.final.state === (memory.states.at(-1) ?? null) ? [] : [`the state is ${q(run.final.state)} (in memory ${q(memory.states.at(-1))})`]),
            ...contextProblem(memory.contexts.at(-1), run.final.context),
          ],
        ] as const,
    ),
  );
  const k = Math.max(straight.requests.length, restarted.requests.length);
  const n = Array.from({ length: k }, (_, j) => j).find((j) => difference(straight.requests[j], restarted.requests[j]) !== undefined);
  if (n !== undefined) end.push(`- the provider requests differ from request ${n + 1}: through the store ${show(straight.requests[n])}, restarted at every step ${show(restarted.requests[n])}`);
  if (end.length) return { message: `Rehydration check failed at the end (every step agrees):\n${end.join('\n')}`, step: undefined };
  return undefined;
}

/** Each run's problems as `- run: problem` lines; the same problems in both store runs once. */
function merge(byRun: readonly (readonly [string, readonly string[]])[]): string[] {
  const [a, b] = byRun;
  if (a && b && a[1].length && a[1].join('\n') === b[1].join('\n')) return a[1].map((p) => `- ${a[0]} and ${b[0]}: ${p}`);
  return byRun.flatMap(([name, problems]) => problems.map((p) => `- ${name}: ${p}`));
}

function saidProblem(got: readonly Message[], want: readonly Message[], reprompts: number | undefined): string[] {
  if (difference(want, got) === undefined) return [];
  const should = reprompts === undefined ? 'the machine alone said' : `it should re-send what steps[${reprompts}] said`;
  return [`the bot said\n${messageLines(got)}\n  but ${should}:\n${messageLines(want)}`];
}

function contextProblem(held: unknown, stored: unknown): string[] {
  const d = difference(held, stored, 'context');
  if (!d) return [];
  const lost = typeof d.held === 'function' || (typeof d.held === 'object' && d.held !== null && !isPlain(d.held));
  const hint = lost ? '\n  The store keeps the context as JSON: a Date, Map, Set, class instance or function in it does not survive. Keep plain data (an ISO date string, an object, an array).' : '';
  return [`${d.path} is ${show(d.stored)} (in memory ${show(d.held)})${hint}`];
}

function messageLines(ms: readonly Message[]): string {
  if (ms.length === 0) return '    (nothing)';
  return ms.map((m, i) => `    ${i + 1}. ${messageLine(m)}`).join('\n');
}

function messageLine(m: Message): string {
  try {
    if (m.kind === 'template') return templateLine(m.template);
    return m.kind === 'text' || m.kind === 'sms' ? `${m.kind} ${q(m.text)}` : sentLine({ ...m, channel: 'interactive' } as SentMessage);
  } catch {
    return JSON.stringify(m);
  }
}

/** A step for people: `type "hi"`, `tap "Large" (reply.large)`, `advance 10m`. */
export function stepLabel(s: RehydrationStep): string {
  if ('advance' in s) return `advance ${typeof s.advance === 'number' ? formatDuration(s.advance) : s.advance}`;
  if ('flow' in s) return `submit the flow ${JSON.stringify(s.flow)}`;
  const { type, text, title } = s.event;
  if (type === 'text' && typeof text === 'string') return `type ${q(text)}`;
  if (typeof title === 'string') return `tap ${q(title)} (${type})`;
  return `send ${JSON.stringify(s.event)}`;
}

/** A value for people: JSON for plain data, `a Date (…)`, `a Map with 2 entries`, `a Foo instance`. */
function show(v: unknown): string {
  if (v === undefined) return 'absent';
  if (typeof v === 'function') return 'a function';
  if (typeof v === 'bigint') return `the bigint ${v}`;
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (v instanceof Date) return Number.isNaN(+v) ? 'an invalid Date' : `a Date (${v.toISOString()})`;
  if (v instanceof Map) return `a Map with ${v.size} ${v.size === 1 ? 'entry' : 'entries'}`;
  if (v instanceof Set) return `a Set with ${v.size} ${v.size === 1 ? 'value' : 'values'}`;
  if (typeof v === 'object' && v !== null && !isPlain(v)) return `a ${(v.constructor as { name?: string } | undefined)?.name ?? 'class'} instance`;
  const text = JSON.stringify(v);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

const q = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v) as unknown;
  return Array.isArray(v) || proto === Object.prototype || proto === null;
}

/** A running actor in context is kept as `{ xstate$$type, id }`; compare it in that form. */
function persisted(v: unknown): unknown {
  const ref = v as { sessionId?: unknown; send?: unknown; toJSON?: () => unknown } | null;
  return typeof ref === 'object' && ref !== null && 'sessionId' in ref && typeof ref.send === 'function' && ref.toJSON ? ref.toJSON() : v;
}

/**
 * The first place where `stored` differs from `held` (as JSON would keep it), or undefined. A
 * field holding `undefined` counts as absent; a Date, Map, Set or class instance never equals
 * what the store gives back.
 */
function difference(held: unknown, stored: unknown, path = ''): { path: string; held: unknown; stored: unknown } | undefined {
  const h = persisted(held);
  if (h === stored || (Number.isNaN(h) && Number.isNaN(stored))) return undefined;
  const here = { path, held, stored };
  if (typeof h !== 'object' || typeof stored !== 'object' || h === null || stored === null) return here;
  if (!isPlain(h) || !isPlain(stored) || Array.isArray(h) !== Array.isArray(stored)) return here;
  if (Array.isArray(h) && Array.isArray(stored)) {
    if (h.length !== stored.length) return here;
    for (const [i, v] of h.entries()) {
      const d = difference(v, stored[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  const a = h as Record<string, unknown>;
  const b = stored as Record<string, unknown>;
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = difference(a[k], b[k], /^[A-Za-z_$][\w$]*$/.test(k) ? `${path}.${k}` : `${path}[${JSON.stringify(k)}]`);
    if (d) return d;
  }
  return undefined;
}
