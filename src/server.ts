/**
 * `startServer()`: the preset wiring behind `colloquy serve`. The store `config.db` names (SQLite or
 * PostgreSQL), the HTTP send adapter,
 * the runtime and the webhook on one HTTP server; with no provider configured, the sandbox
 * provider (and the web simulator) mounted on the same server. Every piece can be swapped.
 */
import { isLoopbackHost, type Config } from './config.js';
import { ConfigError } from './errors.js';
import type { Bot } from './conversation/bot.js';
import type { RuntimeClock } from './conversation/clock.js';
import type { SendOptions } from './conversation/sends.js';
import { Runtime, type Inbound } from './conversation/runtime.js';
import { silentLogger, type Logger } from './log.js';
import { Metrics } from './metrics.js';
import { createSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, type Sandbox } from './sandbox/index.js';
import { openStore } from './store/open.js';
import { numberIdOf } from './store/inbound-facts.js';
import type { BusyEvent, Store } from './store/types.js';
import type { HttpAdapterOptions } from './transport/index.js';
import { buildProviders, sandboxNumbers, seedOptions, type Providers } from './providers.js';
import type { SendAdapter, TransportEvent } from './transport/types.js';
import { createWebhookRouter, digitsOf, startHttpServer, type HttpServer } from './webhook/index.js';
import { createAgentRouter } from './agent/router.js';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { FlowEndpoint } from './flows/endpoint.js';
import { FLOW_KEY_BITS, flowPublicKeyPem } from './flows/keys.js';
import { createFlowsRouter } from './webhook/flows-route.js';
import { HandoffConnector } from './agent/connector.js';

/** What {@link startServer} takes. */
export interface ServerOptions {
  readonly bots: readonly Bot[];
  readonly config: Config;
  readonly logger?: Logger | undefined;
  /** A store instead of the one `config.db` names; the running server's `close()` closes it. */
  readonly store?: Store | undefined;
  readonly clock?: RuntimeClock | undefined;
  readonly sends?: SendOptions | undefined;
  /**
   * A provider of your own (see docs/providers.md), instead of the one the configuration names: it
   * carries every bot's messages, and no sandbox is started. A bare send adapter is read as the
   * seed provider.
   */
  readonly provider?: SendAdapter | undefined;
  /** Mounts extra routers once the server listens (the web simulator uses this). */
  readonly extensions?: readonly ServerExtension[] | undefined;
  /** Adds prom-client's process metrics (CPU, memory, event loop, GC) to `/metrics` (`colloquy serve` does). */
  readonly processMetrics?: boolean | undefined;
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
  /**
   * Whether the sandbox's unauthenticated control routes and the web simulator may be mounted:
   * only on a loopback `HOST`, unless `COLLOQUY_SANDBOX_PUBLIC=1`.
   */
  readonly sandboxControls: boolean;
  readonly config: Config;
  /** The helpdesk connector, when `COLLOQUY_HANDOFF_WEBHOOK_URL` is set. */
  readonly handoffConnector: HandoffConnector | undefined;
  /** The app secrets `POST /flows` accepts (empty: not checked), for simulators that sign as WhatsApp does. */
  readonly flowSecrets: readonly string[];
  /** With the sandbox: the public half (PEM) of the Flow endpoint's key (the configured one, else one made for this run), for simulators playing WhatsApp. */
  readonly flowPublicKey: (() => string) | undefined;
  /** Graceful stop: no new requests, turns in flight finished, sends flushed, database closed. */
  close(): Promise<void>;
}

/** Starts the whole server. */
export async function startServer(o: ServerOptions): Promise<RunningServer> {
  const logger = o.logger ?? silentLogger;
  const metrics = new Metrics({ processMetrics: o.processMetrics });
  const store = o.store ?? (await openStore({ url: o.config.db, synchronous: o.config.sqliteSynchronous, onBusy: (e) => countBusy(metrics, e) }));
  try {
    return await start(o, store, logger, metrics);
  } catch (err) {
    // A server that did not start must not keep its database connections (a pool keeps the process alive).
    if (!o.store) await store.close().catch(() => undefined);
    throw err;
  }
}

async function start(o: ServerOptions, store: Store, logger: Logger, metrics: Metrics): Promise<RunningServer> {
  let runtime: Runtime | undefined;
  let stopping = false;
  const http = await startHttpServer({
    port: o.config.port,
    host: o.config.host,
    metrics,
    beforeMetrics: () => storeGauges(metrics, store),
    health: async () => {
      const base = { ok: runtime !== undefined && !stopping, bots: o.bots.map((b) => b.id), provider: o.config.provider.kind };
      if (!base.ok || !store.health) return base;
      const storeHealth = await store.health();
      metrics.set('colloquy_store_busy', {}, storeHealth.busy ? 1 : 0);
      // Still up: work waits and is retried, so the process is degraded, not down.
      return storeHealth.ok ? { ...base, status: 'ok', store: storeHealth } : { ...base, status: 'degraded', store: storeHealth };
    },
  });
  // Whatever fails from here on (a numbers file naming no served bot, two bots on one number) must not
  // leave the port listening or connections open: the process would not exit after its error.
  let built: Pick<Providers, 'all'> | undefined;
  try {
    const sandboxControls = sandboxControlsAllowed(o.config, logger);
    const sender = o.config.sender ?? SANDBOX_SENDER;
    const sandbox = o.config.provider.kind === 'sandbox' && o.provider === undefined ? createSandboxFor(o, sender, sandboxControls) : undefined;
    if (sandbox) http.mount('/sandbox', sandbox.router);
    const sandboxUrl = sandbox ? `${http.url}/sandbox` : undefined;
    const providers: Providers = o.provider ? { adapter: o.provider, byBot: {}, all: [] } : buildProviders(o.config, { sandbox, sandboxUrl, logger, onEvent: (e) => countTransport(metrics, e) });
    built = providers;
    const adapter = providers.adapter;
    const lanes = o.config.laneConcurrency === undefined ? undefined : { concurrency: o.config.laneConcurrency };
    const work = { ...(o.config.leaseMs !== undefined && { leaseMs: o.config.leaseMs }), ...(o.config.heartbeatMs !== undefined && { heartbeatMs: o.config.heartbeatMs }) };
    const hook = o.config.handoffWebhook;
    const connector = hook && new HandoffConnector({ url: hook.url, secret: hook.secret, clock: o.clock, logger, metrics });
    runtime = new Runtime({
      store,
      adapter,
      providers: providers.byBot,
      numbers: o.config.numbers,
      bots: o.bots,
      sender,
      sms: o.config.sms,
      clock: o.clock,
      logger,
      metrics,
      sends: o.sends,
      work,
      lanes,
      pollMs: o.config.pollMs,
      helpdesk: connector,
      handoffClaimIdleMs: o.config.handoffClaimIdleMs,
      flowBudgetMs: o.config.flows?.budgetMs,
    });
    // The webhook first: it is the hot path, and no other router's routes need to be tried before it.
    http.mount(
      '/',
      createWebhookRouter({
        runtime,
        defaultSender: sender,
        secret: o.config.webhookSecret,
        verifyToken: o.config.verifyToken,
        maxBodyBytes: o.config.maxBodyBytes,
        numbers: o.config.numbers,
        onInbound: sandbox && learnsInbound(sandbox),
      }),
    );
    const flows = flowEndpointFor(o.config, runtime, sandbox !== undefined, { metrics, logger });
    http.mount('/', createFlowsRouter({ endpoint: flows.endpoint, maxBodyBytes: o.config.maxBodyBytes, logger }));
    if (sandbox && flows.publicKey) {
      const pem = flows.publicKey;
      http.mount('/sandbox/flows/public-key', (req, res, next) => (req.method === 'GET' && req.path === '/' ? res.type('text/plain').send(pem()) : next()));
    }
    const clock = runtime.clock;
    http.mount(
      '/',
      createAgentRouter({
        desk: runtime.handoffs,
        serviceToken: o.config.agentToken,
        openOnLoopback: sandbox !== undefined,
        now: () => clock.now(),
        logger,
        replies: o.config.agentReplies,
        sessionHours: o.config.agentSessionHours,
      }),
    );
    sandbox?.setWebhook({ url: `${http.url}/webhook`, smsUrl: `${http.url}/webhook/sms`, secret: o.config.webhookSecret });
    await runtime.start();
    const rt = runtime;
    const running: RunningServer = {
      url: http.url,
      runtime: rt,
      store,
      metrics,
      adapter,
      sandbox,
      sandboxUrl,
      sandboxControls,
      config: o.config,
      handoffConnector: connector,
      flowPublicKey: flows.publicKey,
      flowSecrets: flows.secrets,
      async close() {
        if (stopping) return;
        stopping = true;
        await http.close();
        await rt.stop();
        await Promise.all([...new Set([adapter, ...providers.all])].map((a) => a.close()));
        await store.close();
      },
    };
    for (const extend of o.extensions ?? []) await extend(running, http);
    return running;
  } catch (err) {
    await runtime?.stop().catch(() => undefined);
    await Promise.allSettled([http.close(), ...(built?.all ?? []).map((a) => a.close())]);
    throw err;
  }
}

/**
 * The sandbox plays WhatsApp: a message that reaches the webhook was written by the user, whoever
 * posted it (the simulator, a test, a script), so the sandbox opens the user's window as Meta would.
 */
function learnsInbound(sandbox: Sandbox): (inbounds: readonly Inbound[]) => void {
  return (inbounds) => {
    for (const i of inbounds) {
      const numberId = numberIdOf(i.raw);
      if (i.source === 'whatsapp' && i.providerId !== undefined && numberId !== undefined) sandbox.userWrote(i.user, i.providerId, numberId);
    }
  };
}

/**
 * The Flow endpoint: the configured keys and secrets. With the sandbox and no key, an ephemeral key
 * pair made on first use (the simulators play WhatsApp with its public half), and no signature check
 * unless a secret is set.
 */
function flowEndpointFor(
  config: Config,
  runtime: Runtime,
  sandbox: boolean,
  o: { metrics: Metrics; logger: Logger },
): { endpoint: FlowEndpoint; publicKey: (() => string) | undefined; secrets: readonly string[] } {
  const f = config.flows;
  const numbers = new Map((config.numbers?.numbers ?? []).map((n) => [n.phoneNumberId, { key: f?.numberKeys.get(n.phoneNumberId), secrets: n.appSecret === undefined ? undefined : [n.appSecret] }]));
  // POST /flows names no number: with no default secret, any number's app secret signs it (as the webhook accepts), never none.
  const own = (config.numbers?.numbers ?? []).flatMap((n) => (n.appSecret === undefined ? [] : [n.appSecret]));
  const secrets = f?.secrets.length ? f.secrets : [...new Set(own)];
  const base = { exchange: runtime.flows, secrets, numbers, metrics: o.metrics, logger: o.logger };
  if (f?.key !== undefined || !sandbox) {
    const noKey = 'no Flow endpoint key is configured: set COLLOQUY_FLOW_PRIVATE_KEY (see `colloquy flows keygen`)';
    const key = f?.key;
    return { endpoint: new FlowEndpoint({ ...base, key, noKey }), publicKey: sandbox && key ? () => flowPublicKeyPem(key) : undefined, secrets };
  }
  let pair: { privateKey: KeyObject } | undefined;
  const keys = () => (pair ??= generateKeyPairSync('rsa', { modulusLength: FLOW_KEY_BITS }));
  return {
    endpoint: new FlowEndpoint({ ...base, key: () => keys().privateKey }),
    publicKey: () => flowPublicKeyPem(keys().privateKey),
    secrets,
  };
}

/** The sandbox, playing the seed provider or the Cloud API (then with a number for each bot's). */
function createSandboxFor(o: ServerOptions, sender: string, controlRoutes: boolean): Sandbox {
  const home = sandboxBusinessNumber(o.bots, sender);
  const cloud = o.config.provider.kind === 'sandbox' && o.config.provider.api === 'cloud-api';
  const numbers = cloud ? sandboxNumbers(o.config, o.bots, home) : undefined;
  return createSandbox({
    clientId: SANDBOX_CLIENT_ID,
    clientSecret: SANDBOX_CLIENT_SECRET,
    sender: numbers?.[0]?.displayNumber ?? home,
    ...(numbers?.[0] !== undefined && { phoneNumberId: numbers[0].phoneNumberId }),
    controlRoutes,
    ...(numbers !== undefined && { cloudApi: { numbers } }),
  });
}

/** The sandbox's control routes sign and deliver any payload unauthenticated: loopback only, unless asked for. */
function sandboxControlsAllowed(config: Config, logger: Logger): boolean {
  if (config.provider.kind !== 'sandbox' || isLoopbackHost(config.host) || config.sandboxPublic) return true;
  logger.warn(
    { host: config.host },
    `sandbox control routes (/sandbox/_sandbox/*) and the web simulator are not mounted: HOST=${config.host} is not a loopback address and they take no authentication; set COLLOQUY_SANDBOX_PUBLIC=1 to mount them anyway`,
  );
  return false;
}

/**
 * The number the sandbox's simulated users write to by default: the default sender when a bot
 * sends from it, else the first bot's own number. Inbounds are routed by number only, so a
 * number no bot serves would be refused.
 */
function sandboxBusinessNumber(bots: readonly Bot[], sender: string): string {
  const numbers = bots.map((b) => b.options.sender ?? sender);
  return numbers.find((n) => digitsOf(n) === digitsOf(sender)) ?? numbers[0] ?? sender;
}

/** Where the adapter sends and with which credentials: the configured provider, or a sandbox at `sandboxUrl`. */
export function providerOptions(config: Config, sandboxUrl: string | undefined): Pick<HttpAdapterOptions, 'baseUrl' | 'authUrl' | 'clientId' | 'clientSecret' | 'authMethod'> {
  if (config.provider.kind === 'real') return seedOptions(config.provider);
  if (config.provider.kind === 'cloud-api') {
    const sms = config.provider.sms;
    if (sms === undefined)
      throw new ConfigError(
        'COLLOQUY_BASE_URL',
        'is not set: with COLLOQUY_PROVIDER=cloud-api the seed provider\u2019s relay (COLLOQUY_BASE_URL and its credentials) carries SMS only when configured',
      );
    return seedOptions(sms);
  }
  if (sandboxUrl === undefined) throw new ConfigError('COLLOQUY_BASE_URL', 'no provider is configured and no sandbox is running');
  return { baseUrl: sandboxUrl, authUrl: sandboxUrl, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET };
}

function countBusy(m: Metrics, e: BusyEvent): void {
  m.inc('colloquy_store_busy_total', { outcome: e.outcome, code: e.code });
}

function countTransport(m: Metrics, e: TransportEvent): void {
  if (e.type === 'token.request') m.inc('colloquy_token_requests_total', { outcome: e.ok ? 'ok' : 'error' });
  else if (e.type === 'retry') m.inc('colloquy_transport_retries_total', { endpoint: e.endpoint });
}

/** What the store reports about itself (a SQLite store: its group commit and checkpoints), as gauges. */
function storeGauges(metrics: Metrics, store: Store): void {
  for (const f of store.figures?.() ?? []) metrics.set(f.name as never, (f.labels ?? {}) as never, f.value);
}
