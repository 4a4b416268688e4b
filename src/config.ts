/**
 * The environment (architecture.md §4) as typed configuration, validated at start. A bad value
 * stops the start with an error naming the variable; secrets never appear in the message.
 */
import { envVar, type EnvName } from './env.js';
import { ConfigError } from './errors.js';
import { loadNumbersFile } from './numbers/parse.js';
import type { NumbersConfig } from './numbers/types.js';
import type { KeyObject } from 'node:crypto';
import { loadFlowPrivateKey } from './flows/keys.js';
import { loadRepliesFile, type CannedReplies } from './agent/replies.js';

/** The seed provider's relay and its OAuth credentials (also the SMS channel of a Cloud API deployment). */
export interface SeedProviderConfig {
  readonly baseUrl: string;
  readonly authUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly authMethod: 'body' | 'basic';
}

/**
 * Where the provider is: the seed provider's relay (`real`), Meta's Cloud API (`cloud-api`, with
 * the seed's SMS interface as its SMS channel when configured), or the built-in sandbox playing
 * either one (`api`).
 */
export type ProviderConfig =
  | ({ readonly kind: 'real' } & SeedProviderConfig)
  | { readonly kind: 'cloud-api'; readonly url: string; readonly token: string | undefined; readonly sms: SeedProviderConfig | undefined }
  | { readonly kind: 'sandbox'; readonly api: 'seed' | 'cloud-api' };

/** Colloquy's configuration. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /**
   * Where the store is: a PostgreSQL URL (`postgres://…`, from `COLLOQUY_DATABASE_URL`) or a SQLite
   * file path / `:memory:` (`COLLOQUY_DATABASE_URL` or `COLLOQUY_DB`). May hold a password: log it
   * through `describeStoreLocation()`.
   */
  readonly db: string;
  readonly provider: ProviderConfig;
  /** The default `from` number (undefined: the sandbox's). */
  readonly sender: string | undefined;
  readonly webhookSecret: string | undefined;
  readonly verifyToken: string | undefined;
  readonly sms: { readonly country?: string; readonly dial?: number; readonly mask?: string };
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** The largest webhook body accepted, in bytes. */
  readonly maxBodyBytes: number;
  /** Messages per second per sending number (undefined: unpaced). */
  readonly sendRate: number | undefined;
  /**
   * Mount the sandbox's unauthenticated control routes and the web simulator even when `host` is
   * not a loopback address (`COLLOQUY_SANDBOX_PUBLIC=1`). Off by default.
   */
  readonly sandboxPublic: boolean;
  /**
   * How long a claim on work (a conversation's lane, a send, a helpdesk event) holds without
   * renewal (undefined: 10 s): a dead process's work moves to another after it.
   */
  readonly leaseMs: number | undefined;
  /** How often a process renews everything it holds (undefined: 3 s, or a third of a shorter lease). */
  readonly heartbeatMs: number | undefined;
  /** How often the database is polled for work another process left or added (undefined: 1 s). */
  readonly pollMs: number | undefined;
  /** Conversations whose turns run at once in this process (undefined: 128); the others wait in the store. */
  readonly laneConcurrency?: number | undefined;
  /**
   * How much `colloquy serve` lets V8's old generation grow past what a full GC left live, in
   * percent (undefined: 100; 0: V8's own heuristics, which grow it up to 4×).
   */
  readonly heapGrowthPercent?: number | undefined;
  /** SQLite's `synchronous` (`COLLOQUY_SQLITE_SYNCHRONOUS`, default `full`, every commit fsynced; `normal` trades durability against a dead machine for speed). */
  readonly sqliteSynchronous?: 'full' | 'normal' | undefined;
  /** The agents' API bearer token (undefined: the API answers 401, except on loopback with the sandbox). */
  readonly agentToken?: string | undefined;
  /** How long an inbox sign-in lasts, in hours (undefined: 12). */
  readonly agentSessionHours?: number | undefined;
  /** Where handoff events are POSTed, signed with `secret` (undefined: no connector). */
  readonly handoffWebhook?: { readonly url: string; readonly secret: string } | undefined;
  /** How long a claim lasts without its agent's activity before it goes back to the queue (ms; 0: never; undefined: 30 minutes). */
  readonly handoffClaimIdleMs?: number | undefined;
  /**
   * Meta's Cloud API URL and default token, read whatever COLLOQUY_PROVIDER says: numbers of the
   * numbers file on the Cloud API use them in a seed-provider deployment too.
   */
  readonly cloudApi?: { readonly url: string; readonly token: string | undefined; readonly phoneNumberId?: string | undefined } | undefined;
  /** Several numbers in one deployment (COLLOQUY_NUMBERS_FILE): per number its bot, provider, credentials, app secret and pace. */
  readonly numbers?: NumbersConfig | undefined;
  /** The Flow endpoint (`POST /flows`): its keys, app secrets and answer budget. */
  readonly flows?: FlowsConfig | undefined;
  /** The inbox's canned replies by queue (COLLOQUY_AGENT_REPLIES_FILE), read and checked at start. */
  readonly agentReplies?: CannedReplies | undefined;
}

/** The Flow endpoint's configuration, its keys loaded. */
export interface FlowsConfig {
  /** The default private key (COLLOQUY_FLOW_PRIVATE_KEY); undefined: none. */
  readonly key: KeyObject | undefined;
  /** Numbers' own keys (the numbers file's `flowPrivateKey`), by phone_number_id. */
  readonly numberKeys: ReadonlyMap<string, KeyObject>;
  /** The app secrets a Flow request's signature may match (empty: not checked). */
  readonly secrets: readonly string[];
  /** An answer's budget (ms). */
  readonly budgetMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads and validates the environment. */
export function loadConfig(env: Env = process.env): Config {
  const get = (name: EnvName): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const numbers = numbersConfig(get, env);
  const provider = providerConfig(get, numbers.numbers);
  const sender = digits(get, 'COLLOQUY_SENDER');
  if (provider.kind === 'real' && sender === undefined) missing('COLLOQUY_SENDER', 'is required when COLLOQUY_BASE_URL is set (the number messages are sent from)');
  const country = get('COLLOQUY_SMS_COUNTRY');
  if (country !== undefined && !/^[A-Za-z]{2}$/.test(country)) throw new ConfigError('COLLOQUY_SMS_COUNTRY', `must be a two-letter ISO-3166 code, got "${country}"`);
  const dial = int(get, 'COLLOQUY_SMS_DIAL');
  for (const [old, now] of Object.entries(REPLACED)) {
    if (env[old] !== undefined) throw new ConfigError(old, `was replaced by ${now}: one lease and one heartbeat now cover all work (conversations, sends, helpdesk events)`);
  }
  const lanes = workTimes(get);
  const mask = get('COLLOQUY_SMS_MASK');
  if (mask !== undefined && !/^[A-Za-z0-9 ]{1,11}$/.test(mask)) throw new ConfigError('COLLOQUY_SMS_MASK', 'must be 1–11 letters, digits or spaces');
  return {
    port: int(get, 'PORT') ?? defaultOf('PORT', 0),
    host: get('HOST') ?? defaultOf('HOST', ''),
    db: database(get),
    provider,
    sender,
    webhookSecret: get('COLLOQUY_WEBHOOK_SECRET'),
    verifyToken: get('COLLOQUY_VERIFY_TOKEN'),
    sms: { ...(country !== undefined && { country: country.toUpperCase() }), ...(dial !== undefined && { dial }), ...(mask !== undefined && { mask }) },
    logLevel: (oneOf(get, 'COLLOQUY_LOG_LEVEL') ?? defaultOf('COLLOQUY_LOG_LEVEL', '')) as Config['logLevel'],
    maxBodyBytes: int(get, 'COLLOQUY_MAX_BODY_BYTES') ?? defaultOf('COLLOQUY_MAX_BODY_BYTES', 0),
    sendRate: int(get, 'COLLOQUY_SEND_RATE'),
    sandboxPublic: flag(get, 'COLLOQUY_SANDBOX_PUBLIC') ?? defaultOf('COLLOQUY_SANDBOX_PUBLIC', false),
    heapGrowthPercent: int(get, 'COLLOQUY_HEAP_GROWTH_PERCENT'),
    sqliteSynchronous: (oneOf(get, 'COLLOQUY_SQLITE_SYNCHRONOUS') ?? defaultOf('COLLOQUY_SQLITE_SYNCHRONOUS', '')) as 'full' | 'normal',
    ...lanes,
    ...handoffConfig(get),
    ...numbers,
    cloudApi: { url: url(get, 'COLLOQUY_CLOUD_API_URL') ?? defaultOf('COLLOQUY_CLOUD_API_URL', ''), token: get('COLLOQUY_CLOUD_API_TOKEN'), phoneNumberId: cloudNumberId(get) },
    flows: flowsConfig(get, numbers.numbers),
    ...agentReplies(get),
  };
}

/** The Flow endpoint's keys (read now, so a bad file or passphrase stops the start) and secrets. */
function flowsConfig(get: (n: EnvName) => string | undefined, numbers: NumbersConfig | undefined): FlowsConfig {
  const path = get('COLLOQUY_FLOW_PRIVATE_KEY');
  const passphrase = get('COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE');
  if (path === undefined && passphrase !== undefined) throw new ConfigError('COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE', 'is set but COLLOQUY_FLOW_PRIVATE_KEY is not (which key does it unlock?)');
  const key = path === undefined ? undefined : loadFlowPrivateKey(path, passphrase);
  const numberKeys = new Map<string, KeyObject>();
  for (const n of numbers?.numbers ?? []) {
    if (n.flowKey) numberKeys.set(n.phoneNumberId, loadFlowPrivateKey(n.flowKey.path, n.flowKey.passphrase, n.flowKey.names));
  }
  const current = get('COLLOQUY_FLOW_APP_SECRET') ?? get('COLLOQUY_WEBHOOK_SECRET');
  const previous = get('COLLOQUY_FLOW_APP_SECRET_PREVIOUS');
  if (previous !== undefined && current === undefined)
    throw new ConfigError('COLLOQUY_FLOW_APP_SECRET_PREVIOUS', 'is set but neither COLLOQUY_FLOW_APP_SECRET nor COLLOQUY_WEBHOOK_SECRET is (rotating from it to what?)');
  const secrets = [current, previous].filter((x): x is string => x !== undefined);
  return { key, numberKeys, secrets, budgetMs: int(get, 'COLLOQUY_FLOW_BUDGET_MS') ?? defaultOf('COLLOQUY_FLOW_BUDGET_MS', 0) };
}

/** The provider: the seed's relay, the Cloud API, or the sandbox playing the one COLLOQUY_PROVIDER names. */
function providerConfig(get: (n: EnvName) => string | undefined, numbers: NumbersConfig | undefined): ProviderConfig {
  const which = oneOf(get, 'COLLOQUY_PROVIDER') ?? defaultOf('COLLOQUY_PROVIDER', '');
  oneOf(get, 'COLLOQUY_AUTH_METHOD'); // checked whether the relay is configured or not
  const seed = seedConfig(get);
  if (which === 'seed') return seed === undefined ? { kind: 'sandbox', api: 'seed' } : { kind: 'real', ...seed };
  const cloudUrl = url(get, 'COLLOQUY_CLOUD_API_URL');
  const token = get('COLLOQUY_CLOUD_API_TOKEN');
  // Meta's Cloud API when some credential says so; without any, the sandbox plays it.
  const numberTokens = numbers?.numbers.some((n) => n.provider === 'cloud-api' && n.token !== undefined) === true;
  if (cloudUrl !== undefined && token === undefined && !numberTokens) {
    missing('COLLOQUY_CLOUD_API_TOKEN', 'is required when COLLOQUY_CLOUD_API_URL is set (a system user’s access token), unless COLLOQUY_NUMBERS_FILE gives the numbers their own');
  }
  if (token === undefined && cloudUrl === undefined && !numberTokens) return { kind: 'sandbox', api: 'cloud-api' };
  return { kind: 'cloud-api', url: cloudUrl ?? defaultOf('COLLOQUY_CLOUD_API_URL', ''), token, sms: seed };
}

/** The seed provider's relay, when COLLOQUY_BASE_URL is set (then its credentials are required). */
function seedConfig(get: (n: EnvName) => string | undefined): SeedProviderConfig | undefined {
  const baseUrl = url(get, 'COLLOQUY_BASE_URL');
  if (baseUrl === undefined) return undefined;
  return {
    baseUrl,
    authUrl: url(get, 'COLLOQUY_AUTH_URL') ?? missing('COLLOQUY_AUTH_URL', 'is required when COLLOQUY_BASE_URL is set (the identity provider serving /token)'),
    clientId: get('COLLOQUY_CLIENT_ID') ?? missing('COLLOQUY_CLIENT_ID', 'is required when COLLOQUY_BASE_URL is set'),
    clientSecret: get('COLLOQUY_CLIENT_SECRET') ?? missing('COLLOQUY_CLIENT_SECRET', 'is required when COLLOQUY_BASE_URL is set'),
    authMethod: (oneOf(get, 'COLLOQUY_AUTH_METHOD') ?? defaultOf('COLLOQUY_AUTH_METHOD', '')) as 'body' | 'basic',
  };
}

/** The numbers file, loaded and validated (its bots are checked against the served ones at start). */
function numbersConfig(get: (n: EnvName) => string | undefined, env: Env): Pick<Config, 'numbers'> {
  const file = get('COLLOQUY_NUMBERS_FILE');
  return file === undefined ? {} : { numbers: loadNumbersFile(file, env) };
}

/** The default Cloud API phone_number_id: digits, as Meta gives it (not a phone number). */
function cloudNumberId(get: (n: EnvName) => string | undefined): string | undefined {
  const v = get('COLLOQUY_CLOUD_API_PHONE_NUMBER_ID');
  if (v !== undefined && !/^[0-9]{1,32}$/.test(v)) throw new ConfigError('COLLOQUY_CLOUD_API_PHONE_NUMBER_ID', 'must be the Cloud API phone_number_id, digits only');
  return v;
}

/** The agents' token and the helpdesk connector. */
function handoffConfig(get: (n: EnvName) => string | undefined): Pick<Config, 'agentToken' | 'agentSessionHours' | 'handoffWebhook' | 'handoffClaimIdleMs'> {
  const agentToken = get('COLLOQUY_AGENT_TOKEN');
  if (agentToken !== undefined && agentToken.length < 16) throw new ConfigError('COLLOQUY_AGENT_TOKEN', 'must be at least 16 characters (a bearer token agents send)');
  const hookUrl = url(get, 'COLLOQUY_HANDOFF_WEBHOOK_URL');
  const secret = get('COLLOQUY_HANDOFF_WEBHOOK_SECRET');
  if (hookUrl === undefined && secret !== undefined) throw new ConfigError('COLLOQUY_HANDOFF_WEBHOOK_SECRET', 'is set but COLLOQUY_HANDOFF_WEBHOOK_URL is not (where should handoff events go?)');
  if (hookUrl !== undefined && secret === undefined) missing('COLLOQUY_HANDOFF_WEBHOOK_SECRET', 'is required when COLLOQUY_HANDOFF_WEBHOOK_URL is set (the events are signed with it)');
  if (secret !== undefined && secret.length < 16) throw new ConfigError('COLLOQUY_HANDOFF_WEBHOOK_SECRET', 'must be at least 16 characters');
  return {
    ...(agentToken !== undefined && { agentToken }),
    agentSessionHours: int(get, 'COLLOQUY_AGENT_SESSION_HOURS') ?? defaultOf('COLLOQUY_AGENT_SESSION_HOURS', 0),
    ...(hookUrl !== undefined && secret !== undefined && { handoffWebhook: { url: hookUrl, secret } }),
    handoffClaimIdleMs: int(get, 'COLLOQUY_HANDOFF_CLAIM_IDLE_MS') ?? defaultOf('COLLOQUY_HANDOFF_CLAIM_IDLE_MS', 0),
  };
}

/** The inbox's canned replies, when COLLOQUY_AGENT_REPLIES_FILE names a file (a bad one stops the start). */
function agentReplies(get: (n: EnvName) => string | undefined): Pick<Config, 'agentReplies'> {
  const file = get('COLLOQUY_AGENT_REPLIES_FILE');
  return file === undefined ? {} : { agentReplies: loadRepliesFile(file) };
}

/**
 * The store's location: `COLLOQUY_DATABASE_URL` (a PostgreSQL URL or a SQLite path) wins over
 * `COLLOQUY_DB` (a SQLite path, kept for existing setups).
 */
function database(get: (n: EnvName) => string | undefined): string {
  const name = 'COLLOQUY_DATABASE_URL';
  const v = get(name);
  if (v === undefined) return get('COLLOQUY_DB') ?? defaultOf('COLLOQUY_DB', '');
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(v)?.[1];
  if (scheme === undefined) return v; // a SQLite file path
  if (!/^postgres(ql)?$/i.test(scheme)) throw new ConfigError(name, `must be a postgres:// or postgresql:// URL or a SQLite file path, got a ${scheme}:// URL`);
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    // The value may hold a password: name only the part that is wrong.
    throw new ConfigError(name, 'is not a valid URL (expected postgres://user:password@host:5432/database; percent-encode special characters in the password)');
  }
  if (!u.hostname && !u.searchParams.get('host')) throw new ConfigError(name, 'names no host (expected postgres://user:password@host:5432/database)');
  return v;
}

/** Variables of earlier versions, each lease of its own, now one lease for all work. */
const REPLACED = {
  COLLOQUY_SEND_LEASE_MS: 'COLLOQUY_LEASE_MS',
  COLLOQUY_LANE_LEASE_MS: 'COLLOQUY_LEASE_MS',
  COLLOQUY_SEND_HEARTBEAT_MS: 'COLLOQUY_HEARTBEAT_MS',
  COLLOQUY_LANE_HEARTBEAT_MS: 'COLLOQUY_HEARTBEAT_MS',
} as const;

/** The lease of all work, its heartbeat and the poll, checked against each other. */
function workTimes(get: (n: EnvName) => string | undefined): Pick<Config, 'leaseMs' | 'heartbeatMs' | 'pollMs' | 'laneConcurrency'> {
  const laneConcurrency = int(get, 'COLLOQUY_LANE_CONCURRENCY');
  const leaseMs = int(get, 'COLLOQUY_LEASE_MS');
  const heartbeatMs = int(get, 'COLLOQUY_HEARTBEAT_MS');
  const pollMs = int(get, 'COLLOQUY_POLL_MS');
  const lease = leaseMs ?? defaultOf('COLLOQUY_LEASE_MS', 0);
  if (heartbeatMs !== undefined && heartbeatMs >= lease) {
    throw new ConfigError('COLLOQUY_HEARTBEAT_MS', `must be shorter than the lease (${lease} ms, COLLOQUY_LEASE_MS), got ${heartbeatMs}`);
  }
  if (pollMs !== undefined && pollMs >= lease) {
    throw new ConfigError('COLLOQUY_POLL_MS', `must be shorter than the lease (${lease} ms, COLLOQUY_LEASE_MS), got ${pollMs}`);
  }
  return { leaseMs, heartbeatMs, pollMs, laneConcurrency };
}

/** Whether `host` only accepts connections from this machine (`127.0.0.0/8`, `::1`, `localhost`). */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^(::ffff:)?127(\.\d{1,3}){3}$/.test(h);
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

function flag(get: (n: EnvName) => string | undefined, name: EnvName): boolean | undefined {
  const v = get(name)?.toLowerCase();
  if (v === undefined) return undefined;
  if (TRUE.includes(v)) return true;
  if (FALSE.includes(v)) return false;
  throw new ConfigError(name, `must be 1 or 0 (or true/false, yes/no, on/off), got "${v}"`);
}

function missing(name: string, why: string): never {
  throw new ConfigError(name, why);
}

function url(get: (n: EnvName) => string | undefined, name: EnvName): string | undefined {
  const v = get(name);
  if (v === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${v}"`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new ConfigError(name, `must be an http or https URL, got "${u.protocol}"`);
  return v.replace(/\/+$/, '');
}

function int(get: (n: EnvName) => string | undefined, name: EnvName): number | undefined {
  const t = envVar(name).type;
  if (t.kind !== 'integer') throw new TypeError(`${name} is not declared as an integer`);
  const { min, max } = t;
  const v = get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${v}"`);
  return Number(v);
}

function digits(get: (n: EnvName) => string | undefined, name: EnvName): string | undefined {
  const v = get(name);
  if (v !== undefined && !/^[0-9]{6,20}$/.test(v)) throw new ConfigError(name, 'must be digits only (country code and number, no "+")');
  return v;
}

function oneOf(get: (n: EnvName) => string | undefined, name: EnvName): string | undefined {
  const t = envVar(name).type;
  if (t.kind !== 'choice') throw new TypeError(`${name} is not declared as a choice`);
  const v = get(name);
  if (v === undefined) return undefined;
  if (!t.values.includes(v)) throw new ConfigError(name, `must be one of ${t.values.join(', ')}, got "${v}"`);
  return v;
}

/** A variable's declared default, of the type the caller reads it as. */
function defaultOf<T extends number | string | boolean>(name: EnvName, like: T): T {
  const d = envVar(name).default;
  if (typeof d !== typeof like) throw new TypeError(`${name} declares no ${typeof like} default`);
  return d as T;
}
