/**
 * The sample events `colloquy check` sends a machine: what Colloquy or XState would send, with
 * payloads a bot can read. An invoked actor's output cannot be known, so it gets several guesses.
 */
import type { AnyEventObject } from 'xstate';
import type { Choice } from '../messages/message.js';

/** The user a walked conversation is with. */
export const SAMPLE_USER = '15550000001';

/** The prefix of the event an invoked actor's output comes with. */
export const DONE_ACTOR = 'xstate.done.actor.';

/** The outputs tried, in turn, for an invoked actor. */
const OUTPUT_GUESSES: readonly unknown[] = ['sample output', {}, undefined];

/** Plausible events of a type, as Colloquy or XState would send them; several when the payload is anyone's guess. */
export function sampleEvents(type: string, shown: readonly Choice[] = []): AnyEventObject[] {
  if (!type.startsWith(DONE_ACTOR)) return [sampleEvent(type, shown)];
  const actorId = type.slice(DONE_ACTOR.length);
  return OUTPUT_GUESSES.map((output) => ({ type, output, actorId }));
}

function sampleEvent(type: string, shown: readonly Choice[]): AnyEventObject {
  if (type.startsWith('reply.')) {
    const id = type.slice('reply.'.length);
    return { type, id, title: shown.find((c) => c.id === id)?.title ?? id, via: 'button' };
  }
  if (type === 'text') return { type, text: 'sample text', via: 'whatsapp' };
  if (type === 'flow') return { type, token: 'colloquy-check', data: {} };
  if (type === 'delivery.failed') return { type, channel: 'interactive', reason: 'sample failure', messageId: 0 };
  if (type === 'unsupported') return { type, messageType: 'image' };
  if (type === 'handoff.ended') return { type, by: 'sample-agent', note: 'sample note' };
  if (type === 'handoff.timeout') return { type, waitedMs: 600_000 };
  if (type.startsWith('xstate.error.actor.')) return { type, error: new Error('sample failure'), actorId: type.slice('xstate.error.actor.'.length) };
  return { type };
}
