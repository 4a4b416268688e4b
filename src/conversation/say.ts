/**
 * `say()`: the action a state uses to send messages. It is XState's own `emit` underneath, so a
 * machine stays an ordinary XState machine: the runtime listens for the emitted event, validates
 * each message (naming bot, state and field on failure), and queues it in the outbox.
 */
import { emit, type ActionArgs, type ActionFunction, type EventObject, type MachineContext, type ParameterizedObject } from 'xstate';
import type { Message } from '../messages/message.js';

/** The event `say()` emits; the runtime and `colloquy check` listen for it. */
export const SAY_EVENT = 'colloquy.say';

/** What `say()` emits: the messages, or the error their builder threw. */
export type SayEvent = { readonly type: typeof SAY_EVENT; readonly messages: readonly Message[] } | { readonly type: typeof SAY_EVENT; readonly error: unknown };

/** A message, several, or a function of the machine's context and event that builds them. */
export type SayInput<TContext extends MachineContext, TExpressionEvent extends EventObject, TParams, TEvent extends EventObject> =
  | Message
  | readonly Message[]
  | ((args: ActionArgs<TContext, TExpressionEvent, TEvent>, params: TParams) => Message | readonly Message[]);

/**
 * Sends one or more messages from an entry, exit or transition action.
 *
 * @example
 * entry: say(({ context }) => buttons({ body: `Hi ${context.name}`, buttons: [{ id: 'yes', title: 'Yes' }] }))
 */
export function say<TContext extends MachineContext, TExpressionEvent extends EventObject, TParams extends ParameterizedObject['params'] | undefined, TEvent extends EventObject>(
  input: SayInput<TContext, TExpressionEvent, TParams, TEvent>,
): ActionFunction<TContext, TExpressionEvent, TEvent, TParams, never, never, never, never, SayEvent> {
  return emit<TContext, TExpressionEvent, TParams, TEvent, SayEvent>((args, params): SayEvent => {
    try {
      const out = typeof input === 'function' ? input(args, params) : input;
      return { type: SAY_EVENT, messages: Array.isArray(out) ? out : [out as Message] };
    } catch (error) {
      return { type: SAY_EVENT, error };
    }
  });
}
