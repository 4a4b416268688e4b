/**
 * Colloquy's public API for bot authors and integrators: defining a bot, the messages it says,
 * the events it gets, the runtime and the pieces a server is wired from. Every export is named
 * here. The rest lives behind subpaths, each an entry of its own:
 *
 * - `colloquy/testing`: the test harness, transcripts and rehydration checks;
 * - `colloquy/messages`: the provider's request schemas, limits, GSM-7 and SMS rendering;
 * - `colloquy/store`: the store port and its records, the SQLite store, the migrations runner;
 * - `colloquy/transport`: the HTTP client, token providers, retry, pacing, channel classifiers;
 * - `colloquy/webhook`: the webhook's schemas, errors, number routing and HTTP server;
 * - `colloquy/sandbox`: the sandbox provider, its faults, and inbound payloads to post to a webhook;
 * - `colloquy/cli`: the `colloquy` command as a function.
 */

// Writing a bot.
export {
  defineBot,
  isBot,
  type Bot,
  type BotOptions,
  type FallbackPolicy,
  type FlowField,
  type FlowForm,
  type UnhandledPolicy,
} from './conversation/bot.js';
export { say, type SayInput } from './conversation/say.js';
export type { ColloquyEvent, DeliveryFailedEvent, FlowEvent, ReplyEvent, ReplyVia, TextEvent, UnsupportedEvent } from './conversation/events.js';
export { buttons, flow, list, sms, text, FLOW_TOKEN_PLACEHOLDER, type ButtonInit, type ButtonsInit, type FlowInit, type ListInit, type RowInit, type SectionInit } from './messages/builders.js';
export type { ButtonsMessage, Choice, FlowMessage, InteractiveMessage, ListMessage, Message, SmsMessage, SmsOptions, TextMessage } from './messages/message.js';
export { renderSms, type SmsRenderOptions } from './messages/sms.js';
export { toInteractiveRequest, toSmsRequest, type Addressing, type SmsAddressing } from './messages/request.js';
export { UNREACHABLE_CODES } from './conversation/fallback.js';
export type { FallbackInfo, FallbackTrigger } from './conversation/fallback-info.js';

// Errors: each has a `code` and the context it happened in.
export {
  AuthError,
  BotError,
  ColloquyError,
  ConfigError,
  MessageValidationError,
  StoreError,
  TransportError,
  VersionConflictError,
  formatIssues,
  type Endpoint,
  type Issue,
  type MessageOrigin,
} from './errors.js';

// Running bots: the runtime and what it is wired from.
export { Runtime, type Inbound, type RuntimeOptions } from './conversation/runtime.js';
export type { RuntimeClock } from './conversation/clock.js';
export type { DispatcherOptions } from './conversation/dispatcher.js';
export type { SmsSettings } from './conversation/outbound.js';
export type { InboundSource, Store, TranscriptEntry } from './store/types.js';
export { openStore, describeStoreLocation, type OpenStoreOptions } from './store/open.js';
export { openSqliteStore, type SqliteStore, type SqliteStoreOptions } from './store/sqlite.js';
export { openPgStore, type PgStore, type PgStoreOptions } from './store/pg.js';
export { createHttpAdapter, type HttpAdapterOptions } from './transport/adapter.js';
export { OAuthTokenProvider, staticToken, type TokenProvider } from './transport/token.js';
export type { Channel, Outbound, SendAccepted, SendAdapter, SendFailed, SendResult, SmsOutcome, TransportEvent } from './transport/types.js';
export { createWebhookRouter, type WebhookRouterOptions } from './webhook/router.js';
export { startServer, type RunningServer, type ServerExtension, type ServerOptions } from './server.js';
export type { HttpServer } from './webhook/server.js';
export { loadConfig, type Config, type ProviderConfig } from './config.js';
export { silentLogger, type Logger } from './log.js';
export { Metrics } from './metrics.js';

// Changing a bot: versions, migrations, pinning, and the pre-deploy check.
export type { BotDefinition } from './conversation/bot.js';
export { IncompatibleStateError, MigrationError, type BotMigration, type IncompatiblePolicy } from './conversation/versions.js';
export { findStranded, type StrandReport, type StrandedGroup } from './conversation/stranded.js';

// Handing a conversation to a person: the bot action, its events, the agents' HTTP API and the helpdesk connector.
export { handoff, DEFAULT_HANDOFF_TIMEOUT_MS, type HandoffOptions, type HandoffInput } from './conversation/handoff.js';
export type { HandoffEndedEvent, HandoffTimeoutEvent } from './conversation/events.js';
export { HandoffDesk, HandoffError, type QueuedHandoff, type AgentConversation } from './conversation/handoff-desk.js';
export type { HandoffEventBody, HandoffPayload } from './store/handoff-payload.js';
export { createAgentRouter, type AgentRouterOptions } from './agent/router.js';
export { HandoffConnector, type HandoffConnectorOptions } from './agent/connector.js';
export { signHandoffEvent, verifyHandoffSignature, HANDOFF_SIGNATURE_HEADER } from './agent/signature.js';
