/**
 * `startServer()`: the preset wiring behind `colloquy serve`. SQLite store, the HTTP send adapter,
 * the runtime and the webhook on one HTTP server; with no provider configured, the sandbox
 * provider (and the web simulator) mounted on the same server. Every piece can be swapped.
 */
import type { Config } from './config.js';
import { ConfigError } from './errors.js';
import type { Bot } from './conversation/bot.js';
import type { RuntimeClock } from './conversation/clock.js';
import type { DispatcherOptions } from './conversation/dispatcher.js';
import { Runtime } from './conversation/runtime.js';
import { silentLogger, type Logger } from './log.js';
import { Metrics } from './metrics.js';
import { createSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, type Sandbox } from './sandbox/index.js';
import { openSqliteStore } from './store/sqlite.js';
import type { Store } from './store/types.js';
import { createHttpAdapter, withPacing, type HttpAdapterOptions } from './transport/index.js';
import type { SendAdapter, TransportEvent } from './transport/types.js';
import { createWebhookRouter, startHttpServer, type HttpServer } from './webhook/index.js';
import { createAgentRouter } from './agent/router.js';
import { HandoffConnector } from './agent/connector.js';

/** What {@link startServer} takes. */
export interface ServerOptions {
  readonly bots: readonly Bot[];
  readonly config: Config;
  readonly logger?: Logger | undefined;
  /** A store instead of SQLite at `config.db`. */
  readonly store?: Store | undefined;
  readonly clock?: RuntimeClock | undefined;
  readonly dispatcher?: DispatcherOptions | undefined;
  /** Mounts extra routers once the server listens (the web simulator uses this). */
  readonly extensions?: readonly ServerExtension[] | undefined;
}

/** Something mounted on the server once everything else is up. */
export type ServerExtension = (server: RunningServer, http: HttpServer) => void | Promise<void>;

/** A running server. */
export interface RunningServer {
  readonly url: string;
  readonly runtime: Runtime;
  readonly store: Store;
  readonly metrics: Metrics;
  readonly adapter: SendAdapter;
  /** The in-process sandbox provider, when no real provider is configured. */
  readonly sandbox: Sandbox | undefined;
  /** Where the sandbox's provider routes are (`{url}/sandbox`). */
  readonly sandboxUrl: string | undefined;
  readonly config: Config;
  /** The helpdesk connector, when `COLLOQUY_HANDOFF_WEBHOOK_URL` is set. */
  readonly handoffConnector: HandoffConnector | undefined;
  /** Graceful stop: no new requests, turns in flight finished, sends flushed, database closed. */
  close(): Promise<void>;
}

/** Starts the whole server. */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const logger = o.logger ?? silentLogger;
  const metrics = new Metrics();
  const store = o.store ?? openSqliteStore(o.config.db);
  let runtime: Runtime | undefined;
  let stopping = false;
  const http = await startHttpServer({
    port: o.config.port, host: o.config.host, metrics,
    health: () => ({ ok: runtime !== undefined && !stopping, bots: o.bots.map((b) => b.id), provider: o.config.provider.kind }),
  });
  const sandbox = o.config.provider.kind === 'sandbox' ? createSandbox({ clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET }) : undefined;
  if (sandbox) http.mount('/sandbox', sandbox.router);
  const sandboxUrl = sandbox ? `${http.url}/sandbox` : undefined;
  const direct = createAdapter(o.config, sandboxUrl, logger, (e) => countTransport(metrics, e));
  const adapter = o.config.sendRate === undefined ? direct : withPacing(direct, { perSecond: o.config.sendRate });
  const sender = o.config.sender ?? SANDBOX_SENDER;
  const hook = o.config.handoffWebhook;
  runtime = new Runtime({ store, adapter, bots: o.bots, sender, sms: o.config.sms, clock: o.clock, logger, metrics, dispatcher: o.dispatcher, handoffEvents: hook !== undefined });
  const connector = hook && new HandoffConnector({ store, url: hook.url, secret: hook.secret, clock: o.clock, logger, metrics });
  if (connector) runtime.handoffs.onChange(() => connector.wake());
  http.mount('/', createAgentRouter({ desk: runtime.handoffs, token: o.config.agentToken, openOnLoopback: sandbox !== undefined, logger }));
  http.mount('/', createWebhookRouter({ runtime, defaultSender: sender, secret: o.config.webhookSecret, verifyToken: o.config.verifyToken, maxBodyBytes: o.config.maxBodyBytes }));
  sandbox?.setWebhook({ url: `${http.url}/webhook`, smsUrl: `${http.url}/webhook/sms`, secret: o.config.webhookSecret });
  await runtime.start();
  connector?.wake();
  const rt = runtime;
  const running: RunningServer = {
    url: http.url, runtime: rt, store, metrics, adapter, sandbox, sandboxUrl, config: o.config, handoffConnector: connector,
    async close() {
      if (stopping) return;
      stopping = true;
      await http.close();
      await rt.stop();
      await connector?.stop();
      await adapter.close();
      await store.close();
    },
  };
  for (const extend of o.extensions ?? []) await extend(running, http);
  return running;
}

/** Where the adapter sends and with which credentials: the configured provider, or a sandbox at `sandboxUrl`. */
export function providerOptions(config: Config, sandboxUrl: string | undefined): Pick<HttpAdapterOptions, 'baseUrl' | 'authUrl' | 'clientId' | 'clientSecret' | 'authMethod'> {
  if (config.provider.kind === 'real') {
    const { baseUrl, authUrl, clientId, clientSecret, authMethod } = config.provider;
    return { baseUrl, authUrl, clientId, clientSecret, authMethod };
  }
  if (sandboxUrl === undefined) throw new ConfigError('COLLOQUY_BASE_URL', 'no provider is configured and no sandbox is running');
  return { baseUrl: sandboxUrl, authUrl: sandboxUrl, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET };
}

function createAdapter(config: Config, sandboxUrl: string | undefined, logger: Logger, onEvent: (e: TransportEvent) => void): SendAdapter {
  return createHttpAdapter({ ...providerOptions(config, sandboxUrl), logger, onEvent });
}

function countTransport(m: Metrics, e: TransportEvent): void {
  if (e.type === 'token.request') m.inc('colloquy_token_requests_total', 'OAuth token requests, by outcome', { outcome: e.ok ? 'ok' : 'error' });
  else if (e.type === 'retry') m.inc('colloquy_transport_retries_total', 'HTTP retries inside the adapter, by endpoint', { endpoint: e.endpoint });
}
