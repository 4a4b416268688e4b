/**
 * The terminal chat's Flow endpoint: the chat runs its bot on the test harness (a manual clock that
 * `/wait` moves, no HTTP server of its own), so for live flows it starts the production route,
 * `POST /flows` with the real `FlowEndpoint` (signature, decryption, the conversation's answer,
 * encryption), on 127.0.0.1 with a key pair and an app secret made for the chat. The chat then
 * plays WhatsApp against it over loopback, as the web simulator does against `colloquy serve`.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { FlowReply, FlowRequest } from '../conversation/flow-wire.js';
import { FlowEndpoint } from '../flows/endpoint.js';
import { FLOW_KEY_BITS, flowPublicKeyPem } from '../flows/keys.js';
import { Metrics } from '../metrics.js';
import { createFlowsRouter } from '../webhook/flows-route.js';
import { startHttpServer } from '../webhook/server.js';
import type { FlowEndpointAccess } from './chat-flow.js';

/** A running Flow endpoint for a chat. */
export interface ChatFlowEndpoint {
  readonly access: FlowEndpointAccess;
  close(): Promise<void>;
}

/**
 * Starts `POST /flows` on 127.0.0.1 (a free port) answering from `exchange` (the chat's current
 * runtime's `flows`: a `/restart` brings a new runtime, so it is looked up on each request).
 */
export async function startChatFlowEndpoint(exchange: () => { handle(req: FlowRequest): Promise<FlowReply> }): Promise<ChatFlowEndpoint> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: FLOW_KEY_BITS });
  const appSecret = randomBytes(16).toString('hex');
  const endpoint = new FlowEndpoint({ exchange: { handle: (req) => exchange().handle(req) }, key: privateKey, secrets: [appSecret] });
  const http = await startHttpServer({ port: 0, host: '127.0.0.1', metrics: new Metrics(), health: () => ({ ok: true }) });
  http.mount('/', createFlowsRouter({ endpoint }));
  return { access: { url: `${http.url}/flows`, publicKey: flowPublicKeyPem(privateKey), appSecret }, close: () => http.close() };
}
