/** The sandbox identity provider's token store: random opaque tokens with a lifetime. */
import { randomBytes } from 'node:crypto';
import { ConfigError } from '../errors.js';
import type { SandboxClock } from './types.js';

/** What the token endpoint answers on success (RFC 6749 §5.1). */
export interface TokenGrant {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
}

/** The outcome of checking a bearer token. */
export type TokenCheck = 'valid' | 'unknown' | 'expired';

/** Beyond this many tokens, expired ones are forgotten when a new one is issued. */
const PRUNE_ABOVE = 1000;

/** Issues and checks access tokens by the sandbox's clock. */
export class TokenStore {
  readonly #tokens = new Map<string, number>();
  readonly #clock: SandboxClock;
  #lifetimeSeconds: number;
  #issued = 0;

  constructor(clock: SandboxClock, lifetimeSeconds: number) {
    this.#clock = clock;
    this.#lifetimeSeconds = checkLifetime(lifetimeSeconds);
  }

  /** Issues a new token for the configured lifetime. */
  issue(): TokenGrant {
    if (this.#tokens.size > PRUNE_ABOVE) this.#prune();
    const token = randomBytes(24).toString('base64url');
    this.#tokens.set(token, this.#clock.now() + this.#lifetimeSeconds * 1000);
    this.#issued++;
    return { access_token: token, token_type: 'Bearer', expires_in: this.#lifetimeSeconds };
  }

  /** Whether `token` is one we issued and still live. */
  check(token: string): TokenCheck {
    const expiresAt = this.#tokens.get(token);
    if (expiresAt === undefined) return 'unknown';
    return this.#clock.now() < expiresAt ? 'valid' : 'expired';
  }

  /** Makes every token issued so far expired at once. */
  expireAll(): void {
    for (const token of this.#tokens.keys()) this.#tokens.set(token, Number.NEGATIVE_INFINITY);
  }

  /** Sets the lifetime of tokens issued from now on. */
  setLifetime(seconds: number): void {
    this.#lifetimeSeconds = checkLifetime(seconds);
  }

  /** The lifetime of new tokens, in seconds. */
  get lifetimeSeconds(): number {
    return this.#lifetimeSeconds;
  }

  /** How many tokens were issued since the store was made. */
  get issued(): number {
    return this.#issued;
  }

  /** Forgets every token. */
  clear(): void {
    this.#tokens.clear();
  }

  #prune(): void {
    const now = this.#clock.now();
    for (const [token, expiresAt] of this.#tokens) if (expiresAt <= now) this.#tokens.delete(token);
  }
}

function checkLifetime(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 1) throw new ConfigError('tokenLifetimeSeconds', `must be a positive whole number of seconds (got ${seconds})`);
  return seconds;
}
