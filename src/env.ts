/**
 * Every environment variable Colloquy reads, declared once: its name, the values it takes, its
 * default and what it means. `loadConfig()` parses the environment from these declarations,
 * `colloquy --help` lists them, and docs/reference/configuration.md is generated from them
 * (`npm run docs:generate`), so the three cannot disagree.
 */

/** The values a variable takes. */
export type EnvType =
  | { readonly kind: 'integer'; readonly min: number; readonly max: number; readonly unit?: string }
  | { readonly kind: 'url' }
  | { readonly kind: 'database' }
  | { readonly kind: 'flag' }
  | { readonly kind: 'choice'; readonly values: readonly string[] }
  | { readonly kind: 'digits' }
  | { readonly kind: 'text'; readonly rule?: string };

/** One environment variable. */
export interface EnvVar {
  readonly name: string;
  readonly type: EnvType;
  /** The value used when the variable is unset (a number or string), or what happens then, in words. */
  readonly default: number | string | boolean | undefined;
  /** Set, when the default is not a value but a behaviour ("the sandbox's"). */
  readonly unset?: string;
  /** What it means, one sentence for a person. */
  readonly meaning: string;
  /** The section of the reference it belongs to. */
  readonly group: EnvGroup;
  /** Holds a secret: never printed, logged or echoed in an error. */
  readonly secret?: boolean;
}

/** The reference's sections, in order. */
export const ENV_GROUPS = ['server', 'database', 'provider', 'sms', 'handoff', 'tuning', 'testing'] as const;
/** A section of the reference. */
export type EnvGroup = (typeof ENV_GROUPS)[number];

const int = (min: number, max: number, unit?: string): EnvType => ({ kind: 'integer', min, max, ...(unit !== undefined && { unit }) });
const MS = 'ms';

const VARS = [
  { name: 'PORT', type: int(0, 65_535), default: 3000, group: 'server', meaning: 'The HTTP port of `colloquy serve`, `simulate` and `sandbox` (0 picks a free one).' },
  {
    name: 'HOST',
    type: { kind: 'text' },
    default: '127.0.0.1',
    group: 'server',
    meaning: 'The address the server listens on. On an address other than loopback the sandbox control routes and the web simulator are not mounted (see COLLOQUY_SANDBOX_PUBLIC).',
  },
  {
    name: 'COLLOQUY_LOG_LEVEL',
    type: { kind: 'choice', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    default: 'info',
    group: 'server',
    meaning: 'How much the server logs (JSON lines on stderr).',
  },
  { name: 'COLLOQUY_MAX_BODY_BYTES', type: int(1024, 50 * 1024 * 1024, 'bytes'), default: 1024 * 1024, group: 'server', meaning: 'The largest webhook body accepted; a larger one is answered 413.' },
  {
    name: 'COLLOQUY_SANDBOX_PUBLIC',
    type: { kind: 'flag' },
    default: false,
    group: 'server',
    meaning: 'Mount the sandbox control routes and the web simulator even when HOST is not a loopback address. They take no authentication: only for a trusted network.',
  },
  {
    name: 'COLLOQUY_DATABASE_URL',
    type: { kind: 'database' },
    default: undefined,
    unset: 'the SQLite file COLLOQUY_DB names',
    group: 'database',
    meaning:
      'The database: a `postgres://` or `postgresql://` URL for PostgreSQL (install `pg`), or a SQLite file path or `:memory:` (install `better-sqlite3`). Logs show the URL with its password hidden.',
  },
  { name: 'COLLOQUY_DB', type: { kind: 'text' }, default: './data/colloquy.db', group: 'database', meaning: 'The SQLite file, when COLLOQUY_DATABASE_URL is unset (kept for existing setups).' },
  {
    name: 'COLLOQUY_PROVIDER',
    type: { kind: 'choice', values: ['seed', 'cloud-api'] },
    default: 'seed',
    group: 'provider',
    meaning:
      "Which provider the bots talk to: `seed` (the seed provider's relay, COLLOQUY_BASE_URL) or `cloud-api` (Meta's WhatsApp Cloud API, COLLOQUY_CLOUD_API_URL and COLLOQUY_CLOUD_API_TOKEN). Without credentials for it, the sandbox plays that provider.",
  },
  {
    name: 'COLLOQUY_CLOUD_API_URL',
    type: { kind: 'url' },
    default: 'https://graph.facebook.com/v23.0',
    group: 'provider',
    meaning: 'The Cloud API\u2019s base URL, version included; messages go to `{url}/{phone_number_id}/messages`.',
  },
  {
    name: 'COLLOQUY_CLOUD_API_TOKEN',
    type: { kind: 'text' },
    default: undefined,
    unset: "the sandbox's Cloud API mode runs (with COLLOQUY_PROVIDER=cloud-api)",
    group: 'provider',
    secret: true,
    meaning: "A system user's access token for the Cloud API (no OAuth exchange). Numbers in COLLOQUY_NUMBERS_FILE may have tokens of their own.",
  },
  {
    name: 'COLLOQUY_CLOUD_API_PHONE_NUMBER_ID',
    type: { kind: 'digits' },
    default: undefined,
    unset: 'the bot\u2019s `phoneNumberId`, the numbers file\u2019s, or the one the user last wrote to',
    group: 'provider',
    meaning: 'The Cloud API `phone_number_id` to send from when nothing else names one: a conversation started from your backend with a user who never wrote, on a one-number deployment.',
  },
  {
    name: 'COLLOQUY_NUMBERS_FILE',
    type: { kind: 'text', rule: 'a path to a JSON file' },
    default: undefined,
    unset: 'one number per bot (its `sender`), the credentials above for all',
    group: 'provider',
    meaning: 'Several numbers in one deployment: a JSON file naming, per number, its bot, provider, credentials, app secret, send rate and per-user pace (see docs/cloud-api.md).',
  },
  {
    name: 'COLLOQUY_BASE_URL',
    type: { kind: 'url' },
    default: undefined,
    unset: 'the built-in sandbox provider runs',
    group: 'provider',
    meaning: "The provider's `{base_url}`. Set, it replaces the sandbox with the real provider.",
  },
  {
    name: 'COLLOQUY_AUTH_URL',
    type: { kind: 'url' },
    default: undefined,
    unset: "the sandbox's",
    group: 'provider',
    meaning: "The identity provider's `{auth_url}` serving `/token` (required with COLLOQUY_BASE_URL).",
  },
  {
    name: 'COLLOQUY_AUTH_METHOD',
    type: { kind: 'choice', values: ['body', 'basic'] },
    default: 'body',
    group: 'provider',
    meaning: 'How the client credentials go to `/token`: in the form body, or as HTTP Basic authentication.',
  },
  { name: 'COLLOQUY_CLIENT_ID', type: { kind: 'text' }, default: undefined, unset: "the sandbox's", group: 'provider', meaning: 'The API key id (required with COLLOQUY_BASE_URL).' },
  {
    name: 'COLLOQUY_CLIENT_SECRET',
    type: { kind: 'text' },
    default: undefined,
    unset: "the sandbox's",
    group: 'provider',
    secret: true,
    meaning: 'The API key secret (required with COLLOQUY_BASE_URL).',
  },
  {
    name: 'COLLOQUY_SENDER',
    type: { kind: 'digits' },
    default: undefined,
    unset: "the sandbox's",
    group: 'provider',
    meaning: 'The default `from` number, digits only (required with COLLOQUY_BASE_URL).',
  },
  {
    name: 'COLLOQUY_WEBHOOK_SECRET',
    type: { kind: 'text' },
    default: undefined,
    unset: 'signatures are not checked',
    group: 'provider',
    secret: true,
    meaning: 'The HMAC key that checks `X-Hub-Signature-256` on webhook requests.',
  },
  {
    name: 'COLLOQUY_FLOW_PRIVATE_KEY',
    type: { kind: 'text', rule: 'path of a PEM file' },
    default: undefined,
    unset: 'no Flow endpoint key',
    group: 'provider',
    meaning:
      "The PEM file of the WhatsApp Flow endpoint's RSA private key (2048 bits, encrypted under a passphrase), as `colloquy flows keygen` writes it; its public half is the one uploaded to Meta.",
  },
  {
    name: 'COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE',
    type: { kind: 'text' },
    default: undefined,
    unset: 'required when the key file is encrypted',
    group: 'provider',
    secret: true,
    meaning: 'The passphrase that decrypts COLLOQUY_FLOW_PRIVATE_KEY; `colloquy flows keygen` encrypts the new key under it.',
  },
  {
    name: 'COLLOQUY_FLOW_APP_SECRET',
    type: { kind: 'text' },
    default: undefined,
    unset: 'COLLOQUY_WEBHOOK_SECRET',
    group: 'provider',
    secret: true,
    meaning: 'The app secret that checks `X-Hub-Signature-256` on Flow endpoint requests (the Meta app the flows belong to), when it is not the webhook’s.',
  },
  {
    name: 'COLLOQUY_FLOW_APP_SECRET_PREVIOUS',
    type: { kind: 'text' },
    default: undefined,
    unset: 'one secret only',
    group: 'provider',
    secret: true,
    meaning: 'While the app secret is rotated, the old one: Flow requests signed with either are accepted. Remove it once the rotation is done.',
  },
  {
    name: 'COLLOQUY_FLOW_BUDGET_MS',
    type: int(100, 9000, 'ms'),
    default: 3000,
    group: 'provider',
    meaning: 'How long a live flow’s answer may take before the user sees an error on the screen (a state’s `budgetMs` wins; WhatsApp gives up after 10 s and alerts past a p90 of 1 s).',
  },
  {
    name: 'COLLOQUY_VERIFY_TOKEN',
    type: { kind: 'text' },
    default: undefined,
    unset: 'the GET handshake is refused (403)',
    group: 'provider',
    secret: true,
    meaning: 'The token the provider sends in the `GET /webhook` handshake.',
  },
  {
    name: 'COLLOQUY_SEND_RATE',
    type: int(1, 10_000, 'messages per second'),
    default: undefined,
    unset: 'unpaced',
    group: 'provider',
    meaning: 'At most this many messages per second from each sending number.',
  },
  { name: 'COLLOQUY_SMS_COUNTRY', type: { kind: 'text', rule: 'two letters (ISO 3166)' }, default: undefined, unset: 'not sent', group: 'sms', meaning: 'The `country` field of SMS requests.' },
  { name: 'COLLOQUY_SMS_DIAL', type: int(1, 99_999_999), default: undefined, unset: 'not sent', group: 'sms', meaning: 'The `dial` field (country calling code) of SMS requests.' },
  {
    name: 'COLLOQUY_SMS_MASK',
    type: { kind: 'text', rule: '1 to 11 letters, digits or spaces' },
    default: undefined,
    unset: 'not sent',
    group: 'sms',
    meaning: 'The `mask` (sender name) of SMS requests.',
  },
  {
    name: 'COLLOQUY_AGENT_TOKEN',
    type: { kind: 'text', rule: 'at least 16 characters' },
    default: undefined,
    unset: "only agents' own tokens (`colloquy agents add`) and inbox sessions are accepted (the sandbox also opens the API to loopback)",
    group: 'handoff',
    secret: true,
    meaning:
      "The service account's bearer token for the agents' API (`/agent/*`): it acts for the agent each request names (`agent` in the body or `X-Agent`), recorded as `service`. Each agent has its own token besides (`colloquy agents add`).",
  },
  {
    name: 'COLLOQUY_AGENT_SESSION_HOURS',
    type: int(1, 720, 'h'),
    default: 12,
    group: 'handoff',
    meaning: "How long a sign-in to the agents' inbox (`/agent`) lasts before the agent signs in again with its token.",
  },
  {
    name: 'COLLOQUY_AGENT_REPLIES_FILE',
    type: { kind: 'text', rule: 'a path to a JSON file' },
    default: undefined,
    unset: 'no canned replies',
    group: 'handoff',
    meaning: 'Canned replies for the agents\u2019 inbox, per queue: `{ "queues": { "<queue>": [{ "title", "text" }], "*": [ … ] } }` (`*`: every queue\u2019s); checked at start.',
  },
  {
    name: 'COLLOQUY_HANDOFF_WEBHOOK_URL',
    type: { kind: 'url' },
    default: undefined,
    unset: 'no helpdesk connector',
    group: 'handoff',
    meaning: 'Where handoff events are POSTed, signed (the helpdesk connector).',
  },
  {
    name: 'COLLOQUY_HANDOFF_WEBHOOK_SECRET',
    type: { kind: 'text', rule: 'at least 16 characters' },
    default: undefined,
    unset: 'required with COLLOQUY_HANDOFF_WEBHOOK_URL',
    group: 'handoff',
    secret: true,
    meaning: 'The key that signs handoff events (`X-Colloquy-Signature`).',
  },
  {
    name: 'COLLOQUY_HANDOFF_CLAIM_IDLE_MS',
    type: int(0, 30 * 24 * 3_600_000, MS),
    default: 1_800_000,
    group: 'handoff',
    meaning:
      'How long an agent\u2019s claim on a handoff lasts without the agent\u2019s activity (a claim, a message, a note); then the handoff goes back to the queue and the connector gets `handoff.claim_expired`. 0: claims never expire.',
  },
  {
    name: 'COLLOQUY_LEASE_MS',
    type: int(1_000, 3_600_000, MS),
    default: 10_000,
    group: 'tuning',
    meaning: 'How long a process\u2019s claim on work (a conversation, a send, a helpdesk event) holds without renewal; a dead process\u2019s work moves to another after it.',
  },
  {
    name: 'COLLOQUY_HEARTBEAT_MS',
    type: int(100, 3_600_000, MS),
    default: undefined,
    unset: '3000 ms, or a third of a shorter lease',
    group: 'tuning',
    meaning: 'How often a process renews everything it holds (one statement per table); shorter than the lease.',
  },
  {
    name: 'COLLOQUY_POLL_MS',
    type: int(50, 600_000, MS),
    default: 1_000,
    group: 'tuning',
    meaning: 'How often the database is polled for work another process left or added; shorter than the lease.',
  },
  { name: 'COLLOQUY_LANE_CONCURRENCY', type: int(1, 100_000), default: 128, group: 'tuning', meaning: 'Conversations whose turns run at once in this process; the others wait in the database.' },
  {
    name: 'COLLOQUY_HEAP_GROWTH_PERCENT',
    type: int(0, 1_000, '%'),
    default: 100,
    group: 'tuning',
    meaning: 'How far `colloquy serve` lets V8\u2019s old generation grow past what a full GC left live (0: V8\u2019s own heuristics).',
  },
  {
    name: 'COLLOQUY_SQLITE_SYNCHRONOUS',
    type: { kind: 'choice', values: ['full', 'normal'] },
    default: 'full',
    group: 'tuning',
    meaning:
      'SQLite\u2019s `synchronous` on the store\u2019s write connection. `full`: every commit fsyncs the WAL before the webhook answers 200, so an acknowledged message survives a power cut. `normal`: faster, safe against a crashed process but not against a dead machine.',
  },
  {
    name: 'COLLOQUY_UPDATE_TRANSCRIPTS',
    type: { kind: 'flag' },
    default: false,
    group: 'testing',
    meaning: "`1` rewrites the recorded transcripts `colloquy/testing`'s `expectTranscript()` compares with, instead of failing on a difference.",
  },
] as const satisfies readonly EnvVar[];

/** Every variable, in the reference's order. */
export const ENV_VARS: readonly EnvVar[] = VARS;

/** A declared variable's name. */
export type EnvName = (typeof VARS)[number]['name'];

const BY_NAME = new Map<string, EnvVar>(VARS.map((v) => [v.name, v]));

/** The declaration of a variable. */
export function envVar(name: EnvName): EnvVar {
  return BY_NAME.get(name)!;
}

/** A variable's default, in words, for help and the reference. */
export function describeDefault(v: EnvVar): string {
  if (v.default === undefined) return v.unset ?? 'unset';
  if (typeof v.default === 'boolean') return v.default ? '1' : '0';
  if (typeof v.default === 'number' && v.type.kind === 'integer' && v.type.unit !== undefined) return `${v.default} ${v.type.unit}`.replace(/ %$/, '%');
  return String(v.default);
}

/** The values a variable takes, in words. */
export function describeType(t: EnvType): string {
  switch (t.kind) {
    case 'integer':
      return `whole number, ${t.min} to ${t.max}${t.unit ? ` (${t.unit})` : ''}`;
    case 'url':
      return 'http(s) URL';
    case 'database':
      return 'postgres:// URL or SQLite path';
    case 'flag':
      return '1 or 0 (true/false, yes/no, on/off)';
    case 'choice':
      return t.values.join(' | ');
    case 'digits':
      return 'digits (country code and number)';
    case 'text':
      return t.rule ?? 'text';
  }
}
