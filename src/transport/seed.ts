/**
 * The seed provider as a {@link Provider}: its messaging endpoint carries lists, reply buttons and
 * flows in the seed's envelope; text goes by SMS; it has no templates, no window and no read receipts.
 */
import { MessageValidationError } from '../errors.js';
import { isInteractive, type Message } from '../messages/message.js';
import { toInteractiveRequest } from '../messages/request.js';
import type { Provider, ProviderAddress, ProviderFeatures } from './provider.js';
import type { SendAdapter } from './types.js';

/** What the seed provider carries. */
export const SEED_FEATURES: ProviderFeatures = Object.freeze({ text: false, templates: false, window: false, readReceipts: false, sms: true });

/** The seed's messaging envelope for a list, buttons or flow message. */
export function seedRequest(message: Message, address: ProviderAddress): unknown {
  if (!isInteractive(message)) {
    const why = message.kind === 'template' ? 'templates need a provider that has them (COLLOQUY_PROVIDER=cloud-api)' : 'the seed provider carries only lists, reply buttons and flows';
    throw new MessageValidationError([{ path: [message.kind], message: `cannot go on the seed provider's messaging endpoint: ${why}` }]);
  }
  return toInteractiveRequest(message, { from: address.from, to: address.to, flowToken: address.flowToken });
}

/** A bare send adapter (only `send` and `close`) read as the seed provider. */
export function asSeedProvider(adapter: SendAdapter): Provider {
  return { name: 'seed', features: SEED_FEATURES, request: seedRequest, send: (o, opts) => adapter.send(o, opts), close: () => adapter.close() };
}
