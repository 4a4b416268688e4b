/**
 * Colloquy's public API. Every export is named here; `colloquy/testing` holds the test harness.
 */
export * from './errors.js';
export * from './messages/index.js';
export * from './conversation/index.js';
export type * from './store/types.js';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from './store/sqlite.js';
export { migrate, readMigrations, MIGRATIONS_DIR, type MigrationFile, type MigrationReport } from './store/migrate.js';
export { createHttpAdapter, staticToken, OAuthTokenProvider, type HttpAdapterOptions, type TokenProvider } from './transport/index.js';
export type { Channel, Outbound, SendAdapter, SendResult, SendAccepted, SendFailed, SmsOutcome, TransportEvent } from './transport/types.js';
export { Metrics } from './metrics.js';
export { silentLogger, type Logger } from './log.js';
export { createWebhookRouter, startHttpServer, type WebhookRouterOptions, type HttpServer } from './webhook/index.js';
export { startServer, type ServerOptions, type RunningServer, type ServerExtension } from './server.js';
export { loadConfig, type Config, type ProviderConfig } from './config.js';
export { createSandbox, startSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, type Sandbox, type RunningSandbox } from './sandbox/index.js';
export { shouldFallBack, UNREACHABLE_CODES, type FallbackInfo, type FallbackTrigger } from './conversation/fallback.js';
export { webhookPayload, textMessage, buttonReplyMessage, listReplyMessage, flowReplyMessage, statusUpdate, inboundSms, signBody, verifySignature, SIGNATURE_HEADER } from './sandbox/index.js';
// Handing a conversation to a person (handoffs): the bot action, the agents' desk and HTTP API, the helpdesk connector.
export { handoff, HANDOFF_EVENT, DEFAULT_HANDOFF_TIMEOUT_MS, type HandoffOptions, type HandoffInput, type HandoffRequestEvent } from './conversation/handoff.js';
export type { HandoffEndedEvent, HandoffTimeoutEvent } from './conversation/events.js';
export { HandoffDesk, HandoffError, type QueuedHandoff, type AgentConversation } from './conversation/handoff-desk.js';
export type { TranscriptLine } from './conversation/handoff-lines.js';
export { HANDOFF_TIMER_KEY } from './store/handoff-types.js';
export type { HandoffEventBody, HandoffPayload } from './store/handoff-payload.js';
export { createAgentRouter, type AgentRouterOptions } from './agent/router.js';
export { HandoffConnector, type HandoffConnectorOptions } from './agent/connector.js';
export { signHandoffEvent, verifyHandoffSignature, HANDOFF_SIGNATURE_HEADER } from './agent/signature.js';
