/** `colloquy serve` and `colloquy simulate`: the webhook server, with the sandbox and simulator when no provider is set. */
import { loadConfig, type Config } from '../config.js';
import { ColloquyError } from '../errors.js';
import { errorInfo } from '../log.js';
import { startServer, type RunningServer } from '../server.js';
import { simulatorExtension } from '../simulator/web/index.js';
import { describeStoreLocation } from '../store/open.js';
import { tuneHeap } from './heap.js';
import { createLogger } from './logger.js';
import { loadBot, loadBots } from './load.js';
import type { Io } from './io.js';

/** Serves bots until SIGTERM or SIGINT, then shuts down gracefully. */
export async function serveCommand(paths: readonly string[], io: Io): Promise<number> {
  const config = loadConfig(io.env);
  const bots = await loadBots(paths);
  return serve(config, bots, io);
}

/** The web simulator for one bot, always on the sandbox, on a database in memory. */
export async function simulateCommand(args: readonly string[], io: Io): Promise<number> {
  if (!args[0]) throw new ColloquyError('usage', 'usage: colloquy simulate <bot file>');
  const loaded = loadConfig(io.env);
  const api = loaded.provider.kind === 'cloud-api' || (loaded.provider.kind === 'sandbox' && loaded.provider.api === 'cloud-api') ? 'cloud-api' : 'seed';
  const config: Config = { ...loaded, provider: { kind: 'sandbox', api }, db: ':memory:' };
  return serve(config, [await loadBot(args[0])], io);
}

/** The log levels at which `serve` prints its banner. */
const VERBOSE: ReadonlySet<Config['logLevel']> = new Set(['info', 'debug', 'trace']);

async function serve(config: Config, bots: Awaited<ReturnType<typeof loadBots>>, io: Io): Promise<number> {
  const logger = createLogger(config.logLevel);
  const heap = tuneHeap(config.heapGrowthPercent);
  const extensions = config.provider.kind === 'sandbox' ? [simulatorExtension] : [];
  const server = await startServer({ bots, config, logger, extensions, processMetrics: true });
  // The banner is information: a level that asks for warnings only (or silence) gets none.
  if (VERBOSE.has(config.logLevel)) {
    io.out(
      banner(
        server,
        bots.map((b) => `${b.id}${b.version === 1 ? '' : ` v${b.version}`} (${b.options.sender ?? server.config.sender ?? 'sandbox sender'})`),
      ),
    );
  }
  logger.info({ url: server.url, bots: bots.map((b) => b.id), provider: config.provider.kind, db: describeStoreLocation(config.db), owner: server.runtime.owner, heap }, 'colloquy serve started');
  const live = bots.filter((b) => Object.keys(b.options.flows ?? {}).length > 0).map((b) => b.id);
  if (live.length > 0 && !server.sandbox && config.flows?.key === undefined && (config.flows?.numberKeys.size ?? 0) === 0) {
    logger.warn({ bots: live }, 'bots declare live flows but no Flow endpoint key is set (COLLOQUY_FLOW_PRIVATE_KEY): POST /flows answers 503 and those flows cannot open');
  }
  await new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  logger.info({}, 'shutting down: finishing turns in flight and flushing sends');
  try {
    await server.close();
  } catch (err) {
    logger.error({ err: errorInfo(err) }, 'shutdown failed');
    return 1;
  }
  logger.info({}, 'stopped');
  return 0;
}

/** Where the Flow endpoint's key comes from, for the banner. */
function flowKeyNote(s: RunningServer): string {
  const f = s.config.flows;
  const signed = (f?.secrets.length ?? 0) > 0 ? 'signatures checked' : 'signatures not checked: no app secret';
  if (f?.key !== undefined) return `key: COLLOQUY_FLOW_PRIVATE_KEY, ${signed}`;
  if (s.sandbox) return `a key made for this run, for the simulators (public half: ${s.sandboxUrl}/flows/public-key), ${signed}`;
  return (f?.numberKeys.size ?? 0) > 0 ? `numbers' own keys only, at /flows/{phone_number_id}, ${signed}` : 'no key: answers 503, set COLLOQUY_FLOW_PRIVATE_KEY';
}

function banner(s: RunningServer, bots: string[]): string {
  const lines = [
    `Colloquy is serving ${bots.length} bot${bots.length === 1 ? '' : 's'}: ${bots.join(', ')}`,
    `  webhook     ${s.url}/webhook   (SMS: ${s.url}/webhook/sms)`,
    `  health      ${s.url}/healthz    metrics: ${s.url}/metrics`,
  ];
  if (s.sandbox) {
    const api = s.config.provider.kind === 'sandbox' && s.config.provider.api === 'cloud-api';
    lines.push(
      api
        ? `  sandbox     ${s.sandboxUrl}/cloud   (COLLOQUY_PROVIDER=cloud-api, no COLLOQUY_CLOUD_API_TOKEN: messages go to the built-in sandbox, playing the Cloud API)`
        : `  sandbox     ${s.sandboxUrl}   (no COLLOQUY_BASE_URL set: messages go to the built-in sandbox provider)`,
    );
    lines.push(
      s.sandboxControls
        ? `  simulator   ${s.url}/simulator   (agent console: ${s.url}/simulator/agent)`
        : `  simulator   not mounted: HOST=${s.config.host} is not loopback (set COLLOQUY_SANDBOX_PUBLIC=1 to mount it and /sandbox/_sandbox/*)`,
    );
  } else lines.push(`  provider    ${s.config.provider.kind === 'real' ? s.config.provider.baseUrl : s.config.provider.kind === 'cloud-api' ? `Cloud API ${s.config.provider.url}` : ''}`);
  lines.push(`  flows       ${s.url}/flows   (${flowKeyNote(s)})`);
  lines.push(
    `  agents      ${s.url}/agent/handoffs   (${s.config.agentToken ? "agents' tokens, or COLLOQUY_AGENT_TOKEN for the agent it names" : s.sandbox ? "open on loopback: no COLLOQUY_AGENT_TOKEN; agents' tokens from elsewhere" : "agents' tokens: colloquy agents add NAME"})`,
  );
  lines.push(`  inbox       ${s.url}/agent   (agents sign in with their own token: colloquy agents add NAME)`);
  lines.push(`  database    ${describeStoreLocation(s.config.db)}`, '');
  return lines.join('\n');
}
