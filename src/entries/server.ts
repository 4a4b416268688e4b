/**
 * `colloquy/server`: everything that runs bots. The preset server behind `colloquy serve`, the
 * runtime and what it is wired from (store, send adapter, token providers), the webhook and
 * agents' routers to mount in an app of your own, the helpdesk connector, configuration from the
 * environment, metrics and logging. The store's engine is loaded when the store opens, so a
 * server on PostgreSQL never loads better-sqlite3, and one on SQLite never loads pg.
 */

// The preset server and its configuration.
export { startServer, type RunningServer, type ServerExtension, type ServerOptions } from '../server.js';
export type { HttpServer } from '../webhook/server.js';
export { loadConfig, type Config, type ProviderConfig } from '../config.js';

// The runtime and what it is wired from.
export { Runtime, type Inbound, type RuntimeOptions } from '../conversation/runtime.js';
export type { RuntimeClock } from '../conversation/clock.js';
export type { SendOptions, SendOptions as DispatcherOptions } from '../conversation/sends.js';
export type { WorkOptions } from '../conversation/worker.js';
export type { SmsSettings } from '../conversation/outbound.js';
export type { InboundSource, Store, TranscriptEntry } from '../store/types.js';
export { openStore, describeStoreLocation, type OpenStoreOptions } from '../store/open.js';
export { createHttpAdapter, type HttpAdapterOptions } from '../transport/adapter.js';
export { OAuthTokenProvider, staticToken, type TokenProvider } from '../transport/token.js';
export type { Channel, Outbound, SendAccepted, SendAdapter, SendFailed, SendResult, SmsOutcome, TransportEvent } from '../transport/types.js';
export { createWebhookRouter, type WebhookRouterOptions } from '../webhook/router.js';
export { createFlowsRouter, type FlowsRouterOptions } from '../webhook/flows-route.js';
export { FlowEndpoint, type FlowEndpointNumber, type FlowEndpointOptions, type FlowHttpAnswer, type FlowHttpRequest } from '../flows/endpoint.js';
export { FlowExchange, submitKey, type FlowExchangeDeps } from '../conversation/flow-exchange.js';
export type { FlowOutcome, FlowReply, FlowRequest } from '../conversation/flow-wire.js';
export { decryptFlowRequest, encryptFlowResponse, FlowDecryptError, type DecryptedFlowRequest, type EncryptedFlowRequest, type FlowDecryptReason } from '../flows/crypto.js';
export { verifyFlowSignature, signFlowBody, FLOW_SIGNATURE_HEADER } from '../flows/signature.js';
export { loadFlowPrivateKey, generateFlowKeyPair, flowPublicKeyPem, type FlowKeyPairPem } from '../flows/keys.js';

// Observing it: metrics and logs.
export { Metrics, type MetricsOptions } from '../metrics.js';
export { silentLogger, type Logger } from '../log.js';
export { createLogger } from '../cli/logger.js';

// Before a deploy: the conversations a new version would strand.
export { findStranded, type StrandReport, type StrandedGroup } from '../conversation/stranded.js';

// Handing a conversation to a person: the agents' desk and HTTP API, and the helpdesk connector.
export { HandoffDesk, HandoffError, type QueuedHandoff, type AgentConversation } from '../conversation/handoff-desk.js';
export type { HandoffEventBody, HandoffPayload } from '../store/handoff-payload.js';
export { createAgentRouter, type AgentRouterOptions } from '../agent/router.js';
export { HandoffConnector, type HandoffConnectorOptions } from '../agent/connector.js';
export { signHandoffEvent, verifyHandoffSignature, HANDOFF_SIGNATURE_HEADER } from '../agent/signature.js';
