/**
 * Colloquy's public API. Every export is named here; `colloquy/testing` holds the test harness.
 */
export * from './errors.js';
export * from './messages/index.js';
export * from './conversation/index.js';
export type * from './store/types.js';
export { openStore, storeDialect, migrateDatabase, describeStoreLocation, type OpenStoreOptions } from './store/open.js';
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from './store/sqlite.js';
export { openPgStore, PgStore, type PgStoreOptions } from './store/pg.js';
export { copySqliteToPostgres, type CopyReport, type CopyOptions } from './store/copy.js';
export { migrate, readMigrations, MIGRATIONS_DIR, PG_MIGRATIONS_DIR, type MigrationFile, type MigrationReport } from './store/migrate.js';
export { migratePg, readPgMigrations } from './store/migrate-pg.js';
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
