/**
 * The Flow endpoint's decrypted messages: the request WhatsApp sends and the reply it expects,
 * as Meta's "Implementing your Flow endpoint" gives them.
 */
import { BotError } from '../errors.js';
import type { FlowAnswer } from './flow-screens.js';

/** A decrypted Flow endpoint request. */
export interface FlowRequest {
  readonly version?: string | undefined;
  readonly action: 'ping' | 'INIT' | 'BACK' | 'data_exchange';
  readonly screen?: string | undefined;
  readonly data?: Readonly<Record<string, unknown>> | undefined;
  readonly flow_token?: string | undefined;
}

/** How a request went, for metrics and logs. */
export type FlowOutcome = 'ok' | 'replayed' | 'screen_error' | 'expired' | 'bad_request' | 'unavailable';

/** The answer to a decrypted request: the status and the JSON to encrypt (or, for 427, to send in clear). */
export type FlowReply =
  | { readonly status: 200; readonly outcome: 'ok' | 'replayed' | 'screen_error'; readonly body: Readonly<Record<string, unknown>>; readonly action?: 'error' | undefined }
  /** The token is not (or no longer) valid: WhatsApp shows `error_msg` and disables the flow's button. */
  | { readonly status: 427; readonly outcome: 'expired'; readonly why: string; readonly body: { readonly error_msg: string } }
  | { readonly status: 400; readonly outcome: 'bad_request'; readonly body: { readonly error: string } }
  | { readonly status: 500; readonly outcome: 'unavailable'; readonly body: { readonly error: string } };

const ACTIONS = new Set(['ping', 'INIT', 'BACK', 'data_exchange']);
/** A screen id as Flow JSON allows it: letters, digits and underscores. */
const SCREEN = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;

/** What is wrong with a decrypted request, or undefined. */
export function flowRequestProblem(r: unknown): string | undefined {
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'the decrypted request must be a JSON object';
  const o = r as Record<string, unknown>;
  if (typeof o['action'] !== 'string' || !ACTIONS.has(o['action'])) return 'action must be one of ping, INIT, BACK, data_exchange';
  if (o['data'] !== undefined && (typeof o['data'] !== 'object' || o['data'] === null || Array.isArray(o['data']))) return 'data must be a JSON object';
  if (o['screen'] !== undefined && (typeof o['screen'] !== 'string' || !SCREEN.test(o['screen']))) return 'screen must be a screen id (letters, digits and "_", at most 100)';
  // A ping, and an error notification (`data.error`, with or without a screen), need nothing more.
  if (o['action'] === 'ping' || (o['data'] !== undefined && 'error' in (o['data'] as object))) return undefined;
  if (typeof o['flow_token'] !== 'string' || o['flow_token'] === '') return `flow_token is required for ${o['action']}`;
  const needsScreen = o['action'] === 'data_exchange' || o['action'] === 'BACK';
  if (needsScreen && (typeof o['screen'] !== 'string' || !SCREEN.test(o['screen']))) return `screen is required for ${o['action']} (letters, digits and "_")`;
  return undefined;
}

/**
 * The decrypted reply for an answer: a screen `{screen, data}`, an error on the request's screen
 * (`data.error_message`), or the completion (`SUCCESS` with the params and the flow token).
 * Throws a BotError naming `where` when the answer is not one.
 */
export function flowBody(answer: FlowAnswer, req: FlowRequest, token: string, where: string): Record<string, unknown> {
  const bad = (why: string): never => {
    throw new BotError(`${where}: the Flow answer ${why}`, {});
  };
  if (typeof answer !== 'object' || answer === null) bad('must be made with flowScreen(), flowComplete() or flowError()');
  if (answer.kind === 'screen') {
    if (typeof answer.screen !== 'string' || !SCREEN.test(answer.screen)) bad(`names screen ${JSON.stringify(answer.screen)}: use the screen's id from the Flow JSON`);
    if (answer.screen === 'SUCCESS') bad('names SUCCESS: finish with flowComplete() instead');
    return { screen: answer.screen, data: plain(answer.data, bad) };
  }
  if (answer.kind === 'complete') {
    return { screen: 'SUCCESS', data: { extension_message_response: { params: { ...plain(answer.params, bad), flow_token: token } } } };
  }
  if (answer.kind === 'error') {
    if (typeof answer.message !== 'string' || answer.message === '') bad('flowError() needs a message');
    const screen = req.screen;
    if (screen === undefined) bad('is flowError() on opening: there is no screen to show it on yet (answer the first screen with its error instead)');
    return { screen, data: { ...plain(answer.data ?? {}, bad), error_message: answer.message } };
  }
  return bad('must be made with flowScreen(), flowComplete() or flowError()');
}

function plain(v: unknown, bad: (why: string) => never): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad('data must be a JSON object');
  try {
    return JSON.parse(JSON.stringify(v)) as Record<string, unknown>;
  } catch {
    return bad('data must be JSON (no cycles, no BigInt)');
  }
}
