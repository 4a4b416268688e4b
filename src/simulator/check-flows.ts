/**
 * `colloquy check`'s look at live flows (`flow_action: "data_exchange"`): WhatsApp asks the Flow
 * endpoint for each of their screens, and the endpoint answers from the declaration
 * (`options.flows`) of the state the conversation is in. A flow sent where no declaration answers
 * can never open (every request gets 427); a screen the bot describes (`flowForms`) but does not
 * answer shows an error when submitted; a declaration naming another flow answers the wrong one.
 * A handler for a screen the form does not describe, and a declaration no state that sends a live
 * flow uses, are warnings: the runtime works, but something is likely stale or misplaced.
 */
import { stateText } from '../conversation/actor.js';
import type { Bot } from '../conversation/bot.js';
import { flowScreensFor, isSubmit, type FlowScreens } from '../conversation/flow-screens.js';
import type { FlowMessage, Message } from '../messages/message.js';
import type { Saying } from './walk.js';

/** The kinds of finding about live flows. */
export type LiveFlowFindingKind = 'live-flow-unanswered' | 'flow-id-mismatch' | 'flow-screen-unanswered' | 'flow-screen-undescribed' | 'flow-answers-unused';

/** One finding about a live flow (the bot is added by the caller). */
export interface LiveFlowFinding {
  readonly state: string;
  readonly kind: LiveFlowFindingKind;
  /** The screen, for a screen's finding. */
  readonly id?: string;
  readonly message: string;
  readonly severity?: 'warning';
}

type Declarations = Readonly<Record<string, FlowScreens>>;

/** Findings about the live flows the walk saw sent, and about the declarations none of them uses. */
export function checkLiveFlows(bot: Bot, sayings: readonly Saying[]): LiveFlowFinding[] {
  const flows = (bot.options.flows ?? {}) as Declarations;
  const out: LiveFlowFinding[] = [];
  const used = new Set<string>();
  for (const s of sayings) {
    if (!('messages' in s.said)) continue;
    for (const m of s.said.messages.filter(isLiveFlow)) {
      const path = checkSent(bot, flows, s, m, out);
      if (path !== undefined) used.add(path);
    }
  }
  for (const path of Object.keys(flows)) {
    if (used.has(path)) continue;
    out.push({
      state: path,
      kind: 'flow-answers-unused',
      severity: 'warning',
      message: `flows["${path}"] answers a live flow's screens, but neither this state nor a state inside it sends a data_exchange flow`,
    });
  }
  return out;
}

/** Whether the message is a flow that asks the Flow endpoint for its screens. */
function isLiveFlow(m: Message): m is FlowMessage {
  return typeof m === 'object' && m !== null && m.kind === 'flow' && m.flow?.action?.parameters?.flow_action === 'data_exchange';
}

/** The findings about one live flow sent; the path of the declaration that answers it, if any. */
function checkSent(bot: Bot, flows: Declarations, s: Saying, m: FlowMessage, out: LiveFlowFinding[]): string | undefined {
  const state = s.entryOf ?? s.shownIn;
  const flowId = m.flow.action.parameters.flow_id;
  const where = state === s.shownIn ? '' : ` (the conversation is then in ${s.shownIn})`;
  if (s.snapshot.status !== 'active') {
    out.push({ state, kind: 'live-flow-unanswered', message: `live flow ${flowId} is sent as the conversation ends: its token is no longer valid, so every request from it gets 427` });
    return undefined;
  }
  const found = flowScreensFor(flows, stateText(s.snapshot.value));
  if (!found) {
    out.push({
      state,
      kind: 'live-flow-unanswered',
      message: `live flow ${flowId} (data_exchange) is sent but no options.flows entry answers its screens in ${s.shownIn} or a parent${where}: every request from it gets 427`,
    });
    return undefined;
  }
  const at = `flows["${found.path}"]`;
  const declared = found.screens.flowId;
  if (declared !== undefined && declared !== flowId) {
    out.push({ state, kind: 'flow-id-mismatch', message: `${at} declares flowId "${declared}", but this state sends flow ${flowId}: its answers are for another flow's screens` });
  }
  checkScreens(bot, at, flowId, state, found.screens, out);
  return found.path;
}

/** The screens the bot describes for the simulators (`flowForms[flowId].screens`) against the declared answers. */
function checkScreens(bot: Bot, at: string, flowId: string, state: string, screens: FlowScreens, out: LiveFlowFinding[]): void {
  const described = bot.options.flowForms?.[flowId]?.screens;
  if (described === undefined) return;
  const answered = screens.screens ?? {};
  for (const name of Object.keys(described)) {
    if (Object.hasOwn(answered, name)) continue;
    out.push({ state, kind: 'flow-screen-unanswered', id: name, message: `screen ${name} of flow ${flowId} (flowForms) has no answer in ${at}.screens: submitting it shows the user an error` });
  }
  for (const name of Object.keys(answered)) {
    if (Object.hasOwn(described, name)) continue;
    out.push({
      state,
      kind: 'flow-screen-undescribed',
      id: name,
      severity: 'warning',
      message: `${at}.screens.${name} answers a screen flowForms["${flowId}"] does not describe: the simulators cannot show it (a stale name, or a screen missing from flowForms)`,
    });
  }
}

/**
 * Whether a live flow's completion is expected at the Flow endpoint: its declaration runs durable
 * submits (`{ event, answer }`), whose completing answer makes the `nfm_reply` run no turn, so the
 * state needs no `flow` transition.
 */
export function completesAtEndpoint(bot: Bot, s: Saying): boolean {
  const found = flowScreensFor((bot.options.flows ?? {}) as Declarations, stateText(s.snapshot.value));
  return found !== undefined && Object.values(found.screens.screens ?? {}).some((h) => isSubmit(h));
}
