/**
 * The environment (architecture.md §4) as typed configuration, validated at start. A bad value
 * stops the start with an error naming the variable; secrets never appear in the message.
 */
import { ConfigError } from './errors.js';

/** Where the provider is: the real one, or the built-in sandbox. */
export type ProviderConfig =
  | { readonly kind: 'real'; readonly baseUrl: string; readonly authUrl: string; readonly clientId: string; readonly clientSecret: string; readonly authMethod: 'body' | 'basic' }
  | { readonly kind: 'sandbox' };

/** Colloquy's configuration. */
export interface Config {
  readonly port: number;
  readonly host: string;
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
  /** The agents' API bearer token (undefined: the API answers 401, except on loopback with the sandbox). */
  readonly agentToken?: string | undefined;
  /** Where handoff events are POSTed, signed with `secret` (undefined: no connector). */
  readonly handoffWebhook?: { readonly url: string; readonly secret: string } | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Reads and validates the environment. */
export function loadConfig(env: Env = process.env): Config {
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const baseUrl = url(get, 'COLLOQUY_BASE_URL');
  const authMethod = oneOf(get, 'COLLOQUY_AUTH_METHOD', ['body', 'basic'] as const) ?? 'body';
  const provider: ProviderConfig = baseUrl === undefined
    ? { kind: 'sandbox' }
    : {
        kind: 'real',
        baseUrl,
        authUrl: url(get, 'COLLOQUY_AUTH_URL') ?? missing('COLLOQUY_AUTH_URL', 'is required when COLLOQUY_BASE_URL is set (the identity provider serving /token)'),
        clientId: get('COLLOQUY_CLIENT_ID') ?? missing('COLLOQUY_CLIENT_ID', 'is required when COLLOQUY_BASE_URL is set'),
        clientSecret: get('COLLOQUY_CLIENT_SECRET') ?? missing('COLLOQUY_CLIENT_SECRET', 'is required when COLLOQUY_BASE_URL is set'),
        authMethod,
      };
  const sender = digits(get, 'COLLOQUY_SENDER');
  if (provider.kind === 'real' && sender === undefined) missing('COLLOQUY_SENDER', 'is required when COLLOQUY_BASE_URL is set (the number messages are sent from)');
  const country = get('COLLOQUY_SMS_COUNTRY');
  if (country !== undefined && !/^[A-Za-z]{2}$/.test(country)) throw new ConfigError('COLLOQUY_SMS_COUNTRY', `must be a two-letter ISO-3166 code, got "${country}"`);
  const dial = int(get, 'COLLOQUY_SMS_DIAL', 1, 99_999_999);
  const mask = get('COLLOQUY_SMS_MASK');
  if (mask !== undefined && !/^[A-Za-z0-9 ]{1,11}$/.test(mask)) throw new ConfigError('COLLOQUY_SMS_MASK', 'must be 1–11 letters, digits or spaces');
  return {
    port: int(get, 'PORT', 0, 65_535) ?? 3000,
    host: get('HOST') ?? '127.0.0.1',
    db: get('COLLOQUY_DB') ?? './data/colloquy.db',
    provider,
    sender,
    webhookSecret: get('COLLOQUY_WEBHOOK_SECRET'),
    verifyToken: get('COLLOQUY_VERIFY_TOKEN'),
    sms: { ...(country !== undefined && { country: country.toUpperCase() }), ...(dial !== undefined && { dial }), ...(mask !== undefined && { mask }) },
    logLevel: oneOf(get, 'COLLOQUY_LOG_LEVEL', LOG_LEVELS) ?? 'info',
    maxBodyBytes: int(get, 'COLLOQUY_MAX_BODY_BYTES', 1024, 50 * 1024 * 1024) ?? 1024 * 1024,
    sendRate: int(get, 'COLLOQUY_SEND_RATE', 1, 10_000),
    ...handoffConfig(get),
  };
}

/** The agents' token and the helpdesk connector. */
function handoffConfig(get: (n: string) => string | undefined): Pick<Config, 'agentToken' | 'handoffWebhook'> {
  const agentToken = get('COLLOQUY_AGENT_TOKEN');
  if (agentToken !== undefined && agentToken.length < 16) throw new ConfigError('COLLOQUY_AGENT_TOKEN', 'must be at least 16 characters (a bearer token agents send)');
  const hookUrl = url(get, 'COLLOQUY_HANDOFF_WEBHOOK_URL');
  const secret = get('COLLOQUY_HANDOFF_WEBHOOK_SECRET');
  if (hookUrl === undefined && secret !== undefined) throw new ConfigError('COLLOQUY_HANDOFF_WEBHOOK_SECRET', 'is set but COLLOQUY_HANDOFF_WEBHOOK_URL is not (where should handoff events go?)');
  if (hookUrl !== undefined && secret === undefined) missing('COLLOQUY_HANDOFF_WEBHOOK_SECRET', 'is required when COLLOQUY_HANDOFF_WEBHOOK_URL is set (the events are signed with it)');
  if (secret !== undefined && secret.length < 16) throw new ConfigError('COLLOQUY_HANDOFF_WEBHOOK_SECRET', 'must be at least 16 characters');
  return {
    ...(agentToken !== undefined && { agentToken }),
    ...(hookUrl !== undefined && secret !== undefined && { handoffWebhook: { url: hookUrl, secret } }),
  };
}

function missing(name: string, why: string): never {
  throw new ConfigError(name, why);
}

function url(get: (n: string) => string | undefined, name: string): string | undefined {
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

function int(get: (n: string) => string | undefined, name: string, min: number, max: number): number | undefined {
  const v = get(name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) throw new ConfigError(name, `must be a whole number from ${min} to ${max}, got "${v}"`);
  return Number(v);
}

function digits(get: (n: string) => string | undefined, name: string): string | undefined {
  const v = get(name);
  if (v !== undefined && !/^[0-9]{6,20}$/.test(v)) throw new ConfigError(name, 'must be digits only (country code and number, no "+")');
  return v;
}

function oneOf<T extends string>(get: (n: string) => string | undefined, name: string, values: readonly T[]): T | undefined {
  const v = get(name);
  if (v === undefined) return undefined;
  if (!(values as readonly string[]).includes(v)) throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${v}"`);
  return v as T;
}
