/**
 * The HTTP send adapter: both provider channels (provider.md §1.2, §1.3) over one undici client,
 * with cached OAuth tokens and bounded retries. Wires `token.ts`, `call.ts` and `channels.ts`.
 */
import { ConfigError } from '../errors.js';
import { callProvider, type CallContext } from './call.js';
import { classifyInteractive, classifySms } from './channels.js';
import { systemClock } from './clock.js';
import { HttpClient, targetOf, type HttpPoster } from './http.js';
import { emit, type ObserverOptions } from './log.js';
import { resolveRetry, type RetryOptions } from './retry.js';
import { OAuthTokenProvider, staticToken, type AuthMethod, type TokenProvider } from './token.js';
import type { Clock, Outbound, SendResult } from './types.js';
import { seedRequest, SEED_FEATURES } from './seed.js';
import type { Provider } from './provider.js';

/** The messaging endpoint's path under `baseUrl` (seed §4.1). */
export const MESSAGING_PATH = '/messaging-bsp-api-endpoint-ws/services/v1/messaging';
/** The SMS endpoint's path under `baseUrl` (seed §4.3). */
export const SMS_PATH = '/services/messaging';

/** Client credentials for an identity provider (`POST {authUrl}/token`). */
export interface ClientCredentials {
  readonly authUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly authMethod?: AuthMethod | undefined;
}

/**
 * Where a channel's bearer token comes from: `'shared'` (the adapter's own credentials), other
 * client credentials, a fixed `{token}`, or any {@link TokenProvider}.
 */
export type TokenSource = 'shared' | ClientCredentials | { readonly token: string } | TokenProvider;

/** Settings of {@link createHttpAdapter}. */
export interface HttpAdapterOptions extends ObserverOptions {
  /** The provider's base URL; both endpoints hang under it. */
  readonly baseUrl: string;
  /** The identity provider's base URL, for the SMS token (and the messaging one, by default). */
  readonly authUrl?: string | undefined;
  readonly clientId?: string | undefined;
  readonly clientSecret?: string | undefined;
  /** How the credentials go to the identity provider: form fields (default) or HTTP Basic. */
  readonly authMethod?: AuthMethod | undefined;
  /** The SMS token's source, instead of the credentials above. */
  readonly smsToken?: Exclude<TokenSource, 'shared'> | undefined;
  /** The messaging endpoint's token source (default `'shared'`: the SMS token provider). */
  readonly messagingToken?: TokenSource | undefined;
  /** Connect, headers and body timeout of each request (default 10 s). */
  readonly timeoutMs?: number | undefined;
  /** Most connections per origin (default 64). */
  readonly connections?: number | undefined;
  /** Retry settings (default: 3 attempts, 200 ms base, 5 s cap). */
  readonly retry?: RetryOptions | undefined;
  readonly clock?: Clock | undefined;
  /** An HTTP client to use instead of the adapter's own (which `close()` would then leave open). */
  readonly http?: HttpPoster | undefined;
}

/**
 * Creates the seed provider's adapter (a {@link Provider}: seed-shaped requests, text by SMS, no
 * templates, no window, no read receipts). `send()` never throws for provider or network failures: it returns a
 * {@link SendResult}. Request bodies are sent as given; callers validate them first.
 */
export function createHttpAdapter(options: HttpAdapterOptions): Provider {
  const clock = options.clock ?? systemClock;
  const retry = resolveRetry(options.retry);
  const own = options.http ? undefined : new HttpClient({ timeoutMs: options.timeoutMs, connections: options.connections });
  const http = options.http ?? own!;
  const shared = { http, clock, retry, onEvent: options.onEvent, logger: options.logger };
  const smsTokens = tokenProvider(options.smsToken ?? credentialsOf(options), shared);
  const msgTokens = options.messagingToken === undefined || options.messagingToken === 'shared' ? smsTokens : tokenProvider(options.messagingToken, shared);
  const secrets = secretsOf(options);
  const sms: CallContext = { ...shared, tokens: smsTokens, secrets };
  const messaging: CallContext = { ...shared, tokens: msgTokens, secrets };
  const targets = { sms: targetOf(options.baseUrl, SMS_PATH), messaging: targetOf(options.baseUrl, MESSAGING_PATH) };

  async function send(outbound: Outbound, opts: { signal?: AbortSignal } = {}): Promise<SendResult> {
    const started = clock.now();
    const isSms = outbound.channel === 'sms';
    const result = await callProvider(isSms ? sms : messaging, {
      channel: outbound.channel,
      endpoint: isSms ? 'sms' : 'messaging',
      target: isSms ? targets.sms : targets.messaging,
      body: JSON.stringify(outbound.request),
      classify: isSms ? classifySms : classifyInteractive,
      signal: opts.signal,
    });
    emit(options, { type: 'send', channel: outbound.channel, ok: result.ok, ms: clock.now() - started, status: result.status });
    if (!result.ok) {
      const { channel, status, providerCode: code, kind, attempts, auth } = result;
      options.logger?.warn({ channel, status, code, kind, attempts, auth }, `send failed: ${result.reason}`);
    }
    return result;
  }

  return {
    name: 'seed',
    features: SEED_FEATURES,
    request: seedRequest,
    send,
    async close() {
      await own?.close();
    },
  };
}

/** Every configured secret and static token: none is kept from a provider's answer. */
function secretsOf(o: HttpAdapterOptions): string[] {
  const out = [o.clientSecret];
  for (const source of [o.smsToken, o.messagingToken]) {
    if (source !== undefined && typeof source === 'object' && 'clientSecret' in source) out.push(source.clientSecret);
    if (source !== undefined && typeof source === 'object' && 'token' in source) out.push(source.token);
  }
  return out.filter((s): s is string => typeof s === 'string' && s !== '');
}

/** The adapter's own credentials, all three required. */
function credentialsOf(o: HttpAdapterOptions): ClientCredentials {
  for (const key of ['authUrl', 'clientId', 'clientSecret'] as const) {
    if (o[key] === undefined || o[key] === '') throw new ConfigError(key, 'is required unless smsToken is given');
  }
  return { authUrl: o.authUrl!, clientId: o.clientId!, clientSecret: o.clientSecret!, authMethod: o.authMethod };
}

type Shared = Pick<CallContext, 'http' | 'clock' | 'retry' | 'onEvent' | 'logger'>;

function tokenProvider(source: Exclude<TokenSource, 'shared'>, s: Shared): TokenProvider {
  if ('getToken' in source) return source;
  if ('token' in source) {
    if (source.token === '') throw new ConfigError('token', 'must not be empty');
    return staticToken(source.token);
  }
  return new OAuthTokenProvider({ ...source, http: s.http, clock: s.clock, retry: s.retry, onEvent: s.onEvent, logger: s.logger });
}
