/**
 * The providers a server's bots talk to, from its configuration: the seed provider's relay, Meta's
 * Cloud API (with the seed's SMS interface as its SMS channel when that is configured), or the
 * sandbox playing either; and, with a numbers file, each number's own provider and credentials.
 */
import type { Bot } from './conversation/bot.js';
import type { Config, SeedProviderConfig } from './config.js';
import { ConfigError } from './errors.js';
import type { Logger } from './log.js';
import type { NumberConfig } from './numbers/types.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_CLOUD_API_TOKEN, SANDBOX_CLOUD_API_VERSION, SANDBOX_PATHS, SANDBOX_PHONE_NUMBER_ID, type Sandbox } from './sandbox/index.js';
import { digitsOf } from './webhook/numbers.js';
import { createCloudApiProvider } from './transport/cloud-api/index.js';
import { createHttpAdapter, type HttpAdapterOptions } from './transport/adapter.js';
import { withPacing } from './transport/pacing.js';
import type { Provider } from './transport/provider.js';
import type { SendAdapter, TransportEvent } from './transport/types.js';

/** What {@link buildProviders} needs besides the configuration. */
export interface ProviderContext {
  readonly sandbox: Sandbox | undefined;
  readonly sandboxUrl: string | undefined;
  readonly logger: Logger;
  readonly onEvent: (e: TransportEvent) => void;
}

/** The deployment's provider and the providers of bots whose numbers have another one. */
export interface Providers {
  readonly adapter: SendAdapter;
  readonly byBot: Readonly<Record<string, SendAdapter>>;
  /** Every adapter built here, to close. */
  readonly all: readonly SendAdapter[];
}

/** Builds the providers the configuration names. */
export function buildProviders(config: Config, ctx: ProviderContext): Providers {
  const built: SendAdapter[] = [];
  const keep = <T extends SendAdapter>(a: T): T => {
    built.push(a);
    return a;
  };
  const seed = seedOf(config, ctx);
  const seedAdapter = (): Provider => keep(paced(createHttpAdapter({ ...seedOptions(seed!), logger: ctx.logger, onEvent: ctx.onEvent }), config));
  const numbers = config.numbers?.numbers ?? [];
  const cloud = (entries: readonly NumberConfig[]): Provider => keep(cloudProvider(config, ctx, entries, seed));
  const kind = config.provider.kind;
  const cloudDefault = kind === 'cloud-api' || (kind === 'sandbox' && config.provider.api === 'cloud-api');
  const adapter = cloudDefault ? cloud(numbers.filter((n) => n.provider === 'cloud-api')) : seedAdapter();
  const byBot: Record<string, SendAdapter> = {};
  const otherKind = numbers.filter((n) => (n.provider === 'cloud-api') !== cloudDefault);
  if (otherKind.length > 0) {
    const other = cloudDefault ? (seed === undefined ? undefined : seedAdapter()) : cloud(otherKind);
    for (const n of otherKind) {
      if (other === undefined) throw new ConfigError('COLLOQUY_NUMBERS_FILE', `number ${n.displayNumber} (bot "${n.bot}") is on the seed provider, but COLLOQUY_BASE_URL is not set`);
      byBot[n.bot] = other;
    }
  }
  return { adapter, byBot, all: built };
}

/** The seed provider's relay: the configured one, or the sandbox's. Undefined when neither (a Cloud API deployment without SMS). */
function seedOf(config: Config, ctx: ProviderContext): SeedProviderConfig | undefined {
  const p = config.provider;
  if (p.kind === 'real') return p;
  if (p.kind === 'cloud-api') return p.sms;
  if (ctx.sandboxUrl === undefined) throw new ConfigError('COLLOQUY_BASE_URL', 'no provider is configured and no sandbox is running');
  return { baseUrl: ctx.sandboxUrl, authUrl: ctx.sandboxUrl, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET, authMethod: 'body' };
}

/** The seed adapter's settings of a relay's configuration. */
export function seedOptions(s: SeedProviderConfig): Pick<HttpAdapterOptions, 'baseUrl' | 'authUrl' | 'clientId' | 'clientSecret' | 'authMethod'> {
  return { baseUrl: s.baseUrl, authUrl: s.authUrl, clientId: s.clientId, clientSecret: s.clientSecret, authMethod: s.authMethod };
}

function paced(p: Provider, config: Config): Provider {
  return config.sendRate === undefined ? p : withPacing(p, { perSecond: config.sendRate });
}

/** The Cloud API provider (Meta's, or the sandbox's), its numbers' credentials and pace, and the seed's SMS interface as its SMS channel. */
function cloudProvider(config: Config, ctx: ProviderContext, entries: readonly NumberConfig[], seed: SeedProviderConfig | undefined): Provider {
  const p = config.provider;
  const sandbox = p.kind === 'sandbox' ? ctx.sandbox : undefined;
  const sms = seed === undefined ? undefined : createHttpAdapter({ ...seedOptions(seed), logger: ctx.logger, onEvent: ctx.onEvent });
  const numbers = entries.map((n) => ({ numberId: n.phoneNumberId, displayNumber: n.displayNumber, token: n.token, tokenName: n.tokenName, sendRate: n.sendRate, userPaceMs: n.userPaceMs }));
  if (sandbox) {
    const own = sandbox.cloudApi.numbers.map((n) => ({ numberId: n.phoneNumberId, displayNumber: n.displayNumber, ...(n.token !== undefined && { token: n.token }) }));
    return createCloudApiProvider({
      baseUrl: `${ctx.sandboxUrl}${SANDBOX_PATHS.cloud}/${SANDBOX_CLOUD_API_VERSION}`,
      token: sandbox.cloudApi.token ?? SANDBOX_CLOUD_API_TOKEN,
      numbers: own,
      defaultNumberId: own[0]?.numberId,
      sms,
      logger: ctx.logger,
      onEvent: ctx.onEvent,
    });
  }
  if (p.kind !== 'cloud-api' && p.kind !== 'real') throw new ConfigError('COLLOQUY_PROVIDER', 'the Cloud API needs a URL and a token');
  const url = p.kind === 'cloud-api' ? p.url : config.cloudApi?.url;
  const fallbackToken = p.kind === 'cloud-api' ? p.token : config.cloudApi?.token;
  for (const n of entries) {
    if (n.token === undefined && fallbackToken === undefined)
      throw new ConfigError('COLLOQUY_CLOUD_API_TOKEN', `is required: number ${n.displayNumber} (bot "${n.bot}") is on the Cloud API and the numbers file gives it no token of its own (tokenEnv)`);
  }
  return createCloudApiProvider({
    baseUrl: url ?? 'https://graph.facebook.com/v23.0',
    token: fallbackToken,
    numbers,
    defaultNumberId: config.cloudApi?.phoneNumberId ?? (numbers.length === 1 ? numbers[0]!.numberId : undefined),
    ...(config.sendRate !== undefined && { sendRate: config.sendRate }),
    sms,
    logger: ctx.logger,
    onEvent: ctx.onEvent,
  });
}

/**
 * The business numbers the sandbox plays on the Cloud API, the home number first: with a numbers
 * file, its numbers; else each bot's number (its `sender`, or the default), with its
 * `phoneNumberId` or one made up from the sandbox's.
 */
export function sandboxNumbers(config: Config, bots: readonly Bot[], home: string): { phoneNumberId: string; displayNumber: string }[] {
  const file = config.numbers?.numbers;
  if (file !== undefined) return file.map((n) => ({ phoneNumberId: n.phoneNumberId, displayNumber: n.displayNumber }));
  const out = new Map<string, string>([[digitsOf(home), bots.find((b) => digitsOf(b.options.sender ?? config.sender ?? home) === digitsOf(home))?.options.phoneNumberId ?? SANDBOX_PHONE_NUMBER_ID]]);
  for (const b of bots) {
    const number = digitsOf(b.options.sender ?? config.sender ?? home);
    if (!out.has(number)) out.set(number, b.options.phoneNumberId ?? String(BigInt(SANDBOX_PHONE_NUMBER_ID) + BigInt(out.size)));
  }
  return [...out].map(([displayNumber, phoneNumberId]) => ({ phoneNumberId, displayNumber }));
}
