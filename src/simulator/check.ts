/**
 * `checkBot()`: what `colloquy check` reports about a bot without running it. It walks the
 * machine (see walk.ts), builds every message a state says, and reports messages that break the
 * schema or a limit, choices no transition takes, flows nobody receives, live flows whose screens
 * nothing answers (check-flows.ts), states nothing reaches and states nothing leaves.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import type { Bot } from '../conversation/bot.js';
import { MessageValidationError, formatPath, type Issue } from '../errors.js';
import { sms, text } from '../messages/builders.js';
import { choicesOf, isInteractive, type Message } from '../messages/message.js';
import { toInteractiveRequest } from '../messages/request.js';
import { allNodes, canLeave, handles, nodeName, ownTransitions, staticallyReachable } from './nodes.js';
import { SAMPLE_USER } from './samples.js';
import { longTimers } from './check-window.js';
import { checkLiveFlows, completesAtEndpoint, type LiveFlowFindingKind } from './check-flows.js';
import { TemplateSchema } from '../messages/template.js';
import { check } from '../messages/validate.js';
import { activeName, walkBot, type HandingOff, type Saying, type Walk } from './walk.js';

/** What a finding is about. */
export type FindingKind = 'invalid-message' | 'dangling-choice' | 'flow-without-handler' | LiveFlowFindingKind | 'handoff-unhandled' | 'window-unhandled' | 'dead-end' | 'unreachable-state';

/** One problem `colloquy check` found. */
export interface Finding {
  readonly bot: string;
  /** The state, as a dotted path below the machine (`size`, `order.size`). */
  readonly state: string;
  readonly kind: FindingKind;
  /** The button or row id, for a dangling choice; the screen, for a live flow's screen. */
  readonly id?: string;
  readonly message: string;
  /**
   * `warning`: likely a mistake, but the bot works as it is (`colloquy check` does not fail on
   * warnings alone). Absent for a problem.
   */
  readonly severity?: 'warning';
}

/** The order findings of one state are listed in. */
const KIND_ORDER: readonly FindingKind[] = [
  'invalid-message',
  'dangling-choice',
  'flow-without-handler',
  'live-flow-unanswered',
  'flow-id-mismatch',
  'flow-screen-unanswered',
  'flow-screen-undescribed',
  'flow-answers-unused',
  'handoff-unhandled',
  'window-unhandled',
  'dead-end',
  'unreachable-state',
];

type Add = (f: Omit<Finding, 'bot'>) => void;

/**
 * Checks a bot. Returns its findings, each once, ordered by state (in the order the machine
 * defines them), then by kind. Throws a BotError when the machine cannot start at all.
 *
 * @example
 * for (const f of checkBot(bot)) console.log(`${f.state} › ${f.kind}: ${f.message}`);
 */
export function checkBot(bot: Bot): Finding[] {
  const found = new Map<string, Finding>();
  const add: Add = (f) => {
    const finding: Finding = { bot: bot.id, ...f };
    const key = JSON.stringify([finding.state, finding.kind, finding.id, finding.message]);
    if (!found.has(key)) found.set(key, finding);
  };
  const walk = walkBot(bot);
  for (const s of walk.sayings) checkSaying(bot, s, add);
  for (const f of checkLiveFlows(bot, walk.sayings)) add(f);
  for (const h of walk.handoffs) checkHandoff(h, add);
  checkStates(bot.machine, walk, add);
  for (const t of longTimers(bot)) add({ state: t.state, kind: 'window-unhandled', message: t.message });
  return sortFindings([...found.values()], bot.machine);
}

function checkSaying(bot: Bot, s: Saying, add: Add): void {
  const state = s.entryOf ?? s.shownIn;
  if ('error' in s.said) {
    if (!s.guessed) for (const message of errorLines(s.said.error)) add({ state, kind: 'invalid-message', message });
    return;
  }
  const where = state === s.shownIn ? '' : ` in ${s.shownIn}`;
  for (const m of s.said.messages) {
    const issues = validate(m);
    for (const i of issues) add({ state, kind: 'invalid-message', message: `${formatPath(i.path)}: ${i.message}` });
    if (issues.length > 0) continue;
    for (const c of choicesOf(m)) {
      if (handles(s.snapshot, `reply.${c.id}`)) continue;
      const what = m.kind === 'list' ? 'row' : 'button';
      add({ state, kind: 'dangling-choice', id: c.id, message: `${what} "${c.title}" has no reply.${c.id} transition${where}` });
    }
    // A live flow completed by a durable submit at the Flow endpoint runs its turn there, not on the `flow` event.
    const live = m.kind === 'flow' && m.flow.action.parameters.flow_action === 'data_exchange';
    if (m.kind === 'flow' && !handles(s.snapshot, 'flow') && !(live && completesAtEndpoint(bot, s))) {
      add({ state, kind: 'flow-without-handler', message: `flow ${m.flow.action.parameters.flow_id} is sent but no "flow" transition receives its answers${where}` });
    }
  }
}

/** Why a state that hands off must handle each of the handoff's two ends. */
const HANDOFF_ENDS = {
  'handoff.ended': 'when an agent hands the conversation back, the bot would not take it',
  'handoff.timeout': 'when no agent claims it in time, the handoff closes quietly and the user is left waiting, answered as if someone were coming, until the conversation expires',
} as const;

/** A state that hands off waits for `handoff.ended` and `handoff.timeout`: each it does not handle leaves the user stuck. */
function checkHandoff(h: HandingOff, add: Add): void {
  if (h.snapshot.status !== 'active') return; // a final state: the conversation ends, and the handoff with it
  const missing = (Object.keys(HANDOFF_ENDS) as (keyof typeof HANDOFF_ENDS)[]).filter((e) => !handles(h.snapshot, e));
  if (missing.length === 0) return;
  const where = h.state === activeName(h.snapshot) ? '' : ` (waiting in ${activeName(h.snapshot)})`;
  const message =
    missing.length === 2
      ? `hands the conversation to a person but handles neither handoff.ended nor handoff.timeout${where}: the bot would never take it back`
      : `hands the conversation to a person but does not handle ${missing[0]}${where}: ${HANDOFF_ENDS[missing[0]!]}`;
  add({ state: h.state, kind: 'handoff-unhandled', message });
}

function errorLines(error: unknown): string[] {
  if (error instanceof MessageValidationError) return error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`);
  return [`the message could not be built: ${error instanceof Error ? error.message : String(error)}`];
}

/** What the runtime would reject when sending the message (a hand-made message skips the builders). */
function validate(m: Message): readonly Issue[] {
  if (typeof m !== 'object' || m === null) return [{ path: [], message: `must be a message object (got ${m === null ? 'null' : typeof m})` }];
  try {
    if (isInteractive(m)) toInteractiveRequest(m, { from: SAMPLE_USER, to: SAMPLE_USER, flowToken: 'colloquy-check' });
    else if (m.kind === 'text') text(m.text);
    else if (m.kind === 'sms') sms(m.text);
    else if (m.kind === 'template') {
      const r = check(TemplateSchema, m.template, ['template']);
      return r.ok ? [] : r.issues;
    } else return [{ path: ['kind'], message: `must be list, buttons, flow, template, text or sms (got ${JSON.stringify((m as { kind?: unknown }).kind)})` }];
    return [];
  } catch (err) {
    if (err instanceof MessageValidationError) return err.issues;
    throw err;
  }
}

/** Unreachable states, and reachable ones that can never be left. */
function checkStates(machine: AnyStateMachine, walk: Walk, add: Add): void {
  const statically = staticallyReachable(machine);
  for (const node of allNodes(machine)) {
    if (node.type === 'history') continue;
    const state = nodeName(node);
    if (!walk.reached.has(state) && !statically.has(node)) {
      add({ state, kind: 'unreachable-state', message: 'no transition leads to this state' });
    } else if (isDeadEnd(node)) {
      add({ state, kind: 'dead-end', message: deadEndMessage(node) });
    }
  }
}

/** A region of a parallel state is left with its parent, so only the parent is judged. */
function isDeadEnd(node: AnyStateNode): boolean {
  return node.type !== 'final' && node.parent?.type !== 'parallel' && !canLeave(node);
}

function deadEndMessage(node: AnyStateNode): string {
  const loops = ownTransitions(node).some((t) => t.target !== undefined || t.actions.length > 0);
  return loops ? 'the state can never be left: its transitions all stay in it' : 'the state can never be left: no transition, after, invoke onDone/onError or done state leads out';
}

function sortFindings(findings: readonly Finding[], machine: AnyStateMachine): Finding[] {
  const order = new Map(allNodes(machine).map((n, i) => [nodeName(n), i]));
  const rank = (f: Finding): number => order.get(f.state.split(', ')[0] ?? '') ?? order.size;
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => rank(a.f) - rank(b.f) || KIND_ORDER.indexOf(a.f.kind) - KIND_ORDER.indexOf(b.f.kind) || a.i - b.i)
    .map(({ f }) => f);
}
