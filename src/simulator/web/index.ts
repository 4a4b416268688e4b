/**
 * The web simulator: a page at `/simulator` that shows a bot's messages the way a phone does
 * (lists, reply buttons with their media headers, flows, SMS), lets a person tap through them over
 * the real webhook, and shows beside the chat the conversation's state and context and the raw
 * requests exchanged with the (sandbox) provider, live.
 */
import { SANDBOX_SENDER } from '../../sandbox/constants.js';
import type { ServerExtension } from '../../server.js';
import { createSimulatorRouter } from './router.js';
import { createAgentConsoleRouter } from './agent/router.js';

export { createSimulatorRouter, type SimulatorOptions } from './router.js';
export { createAgentConsoleRouter } from './agent/router.js';
export type { View, ConversationView, RequestView, WindowView } from './view.js';
export type { HandoffView } from './handoff-view.js';
export type { ChatItem, UserItem, BotItem, NoteItem, TemplateView } from './timeline.js';
export type { BotInfo } from './bots.js';

/**
 * Mounts the web simulator at `/simulator` on a server that runs the in-process sandbox (it needs
 * the sandbox to deliver the user's taps and to see the provider's side). Without a sandbox it
 * mounts nothing and says so in the log.
 *
 * @example
 * const server = await startServer({ bots, config, extensions: [simulatorExtension] });
 * console.log(`${server.url}/simulator`);
 */
export const simulatorExtension: ServerExtension = (server, http) => {
  if (!server.sandbox) {
    server.runtime.logger.warn({}, 'web simulator not mounted: it needs the sandbox provider (COLLOQUY_BASE_URL is set)');
    return;
  }
  if (!server.sandboxControls) return; // the server said why at start (a non-loopback HOST)
  const defaultSender = server.config.sender ?? SANDBOX_SENDER;
  // The page's live flows go through the server's own Flow endpoint, as WhatsApp's requests would.
  const publicKey = server.flowPublicKey;
  const appSecret = server.flowSecrets[0];
  const flows = publicKey && (() => ({ url: `${server.url}/flows`, publicKey: publicKey(), appSecret }));
  http.mount('/simulator', createSimulatorRouter({ sandbox: server.sandbox, runtime: server.runtime, store: server.store, defaultSender, flows }));
  http.mount('/simulator/agent', createAgentConsoleRouter());
};
