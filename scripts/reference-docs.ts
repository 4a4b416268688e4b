/**
 * The reference pages written from the code's own declarations: the environment variables
 * (src/env.ts), the metrics (src/metrics-catalog.ts) and the HTTP routes (src/http-routes.ts).
 * `npm run docs:generate` writes them; test/docs/reference.test.ts fails when a page on disk is
 * not what this would write now.
 */
import { describeDefault, describeType, ENV_GROUPS, ENV_VARS, type EnvGroup } from '../src/env.js';
import { HTTP_ROUTES, ROUTE_MOUNTS } from '../src/http-routes.js';
import { METRICS, type MetricDeclaration } from '../src/metrics-catalog.js';

/** The pages, by path from the repository's root. */
export function referencePages(): Record<string, string> {
  return {
    'docs/reference/configuration.md': configurationPage(),
    'docs/reference/metrics.md': metricsPage(),
    'docs/reference/http.md': httpPage(),
  };
}

const banner = (source: string): string => `<!-- Generated from ${source} by \`npm run docs:generate\`: edit the declarations there, not this page. -->\n\n`;

/** A table cell: pipes escaped, one line. */
const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

const table = (head: readonly string[], rows: readonly (readonly string[])[]): string =>
  [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)].join('\n');

const ENV_TITLES: Record<EnvGroup, string> = {
  server: 'Server',
  database: 'Database',
  provider: 'Provider',
  sms: 'SMS',
  handoff: 'Handoff to a person',
  tuning: 'Tuning: leases, polling and concurrency',
  testing: 'Testing',
};

function configurationPage(): string {
  const sections = ENV_GROUPS.map((g) => {
    const rows = ENV_VARS.filter((v) => v.group === g).map((v) => [
      `\`${v.name}\``,
      describeType(v.type),
      v.default === undefined ? `unset: ${describeDefault(v)}` : `\`${describeDefault(v)}\``,
      `${v.meaning}${v.secret ? ' A secret: never logged.' : ''}`,
    ]);
    return `## ${ENV_TITLES[g]}\n\n${table(['Variable', 'Values', 'Default', 'Meaning'], rows)}\n`;
  });
  return `${banner('src/env.ts')}# Configuration reference

Colloquy is configured by environment variables, all optional. \`colloquy serve\` (and
\`loadConfig()\` from \`colloquy/server\`) reads them at start; a bad value stops the start with a
message naming the variable, and never echoes a secret. \`colloquy --help\` lists the same
variables with their defaults. Leading and trailing spaces are ignored, and an empty value counts
as unset.

${sections.join('\n')}`;
}

const METRIC_TITLES: Record<MetricDeclaration['group'], string> = {
  conversations: 'Conversations and turns',
  delivery: 'Delivery to the provider',
  webhook: 'Webhook',
  handoff: 'Handoff to a person',
  versions: 'Bot versions',
  store: 'Store',
  'scale-out': 'Several processes',
  flows: 'WhatsApp Flows (the Flow endpoint)',
};

function metricsPage(): string {
  const entries = Object.entries(METRICS) as [string, MetricDeclaration][];
  const groups = [...new Set(entries.map(([, m]) => m.group))];
  const sections = groups.map((g) => {
    const rows = entries.filter(([, m]) => m.group === g).map(([name, m]) => [`\`${name}\``, m.type, m.labels.length ? m.labels.map((l) => `\`${l}\``).join(', ') : '', m.help]);
    return `## ${METRIC_TITLES[g]}\n\n${table(['Metric', 'Type', 'Labels', 'Help'], rows)}\n`;
  });
  return `${banner('src/metrics-catalog.ts')}# Metrics reference

\`GET /metrics\` answers in the Prometheus text format. Each metric below appears once it has a
first value. Histograms are in seconds, with buckets from 1 ms to 10 s. \`colloquy serve\` also
exports prom-client's default process metrics (\`process_*\`, \`nodejs_*\`: CPU, memory, event-loop
lag, garbage collection); \`startServer()\` does when given \`processMetrics: true\`. The store
gauges (\`colloquy_store_commits\` and the rest of the SQLite store's) are set on each scrape.

${sections.join('\n')}`;
}

function httpPage(): string {
  const rows = HTTP_ROUTES.map((r) => [r.method, `\`${r.path}\``, ROUTE_MOUNTS[r.mounted], r.meaning]);
  return `${banner('src/http-routes.ts')}# HTTP reference

The routes \`colloquy serve\` (and \`startServer()\` from \`colloquy/server\`) answers on one port
(\`PORT\`, default 3000). An app of your own can mount the webhook and the agents' API instead:
\`createWebhookRouter()\` gives the \`/webhook\` routes and \`createAgentRouter()\` the \`/agent\`
ones. The sandbox's routes exist only while no real provider is configured, and its control
routes and the web simulator take no authentication, so they are mounted only on a loopback
\`HOST\` unless \`COLLOQUY_SANDBOX_PUBLIC=1\`.

${table(['Method', 'Path', 'Mounted', 'Meaning'], rows)}
`;
}
