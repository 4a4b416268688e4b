/**
 * The business numbers a Cloud API provider sends from: per `phone_number_id` its access token,
 * the name that token is known by (for errors that must name it without showing it), its send
 * rate and its per-user pace. Numbers not listed use the provider's defaults.
 */
import { ConfigError } from '../../errors.js';
import { targetOf, type Target } from '../http.js';
import type { PaceSettings } from './pace.js';

/** The default send rate of a number (Meta: 80 messages/s; 1,000 once upgraded). */
export const DEFAULT_SEND_RATE = 80;
/** The name the default token goes by in errors. */
export const DEFAULT_TOKEN_NAME = 'COLLOQUY_CLOUD_API_TOKEN';

/** One business number of a Cloud API provider. */
export interface CloudApiNumber {
  /** Its Cloud API `phone_number_id` (digits). */
  readonly numberId: string;
  /** The number users see, digits only: lets a send or read receipt that knows only `from` find the `phone_number_id`. */
  readonly displayNumber?: string | undefined;
  /** Its access token (default: the provider's `token`). */
  readonly token?: string | undefined;
  /** What its token is called in errors (default: `numbers[i].token` when it has its own, else the provider's `tokenName`). */
  readonly tokenName?: string | undefined;
  /** Messages per second (default: the provider's `sendRate`). */
  readonly sendRate?: number | undefined;
  /** Least ms between two messages to one user (default: the provider's `userPaceMs`). */
  readonly userPaceMs?: number | undefined;
}

/** What the book needs of the provider's options. */
export interface NumberDefaults {
  readonly baseUrl: string;
  readonly token?: string | undefined;
  readonly tokenName?: string | undefined;
  readonly numbers?: readonly CloudApiNumber[] | undefined;
  readonly defaultNumberId?: string | undefined;
  readonly sendRate?: number | undefined;
  readonly userPaceMs?: number | undefined;
}

/** A number, resolved: where its messages go and with what token. */
export interface ResolvedNumber extends PaceSettings {
  readonly numberId: string;
  readonly token: string | undefined;
  readonly tokenName: string;
  /** `POST {baseUrl}/{numberId}/messages`. */
  readonly target: Target;
}

const NUMBER_ID = /^[0-9]{1,32}$/;

/** The provider's numbers, checked once when it is created. */
export class NumberBook {
  readonly #byId = new Map<string, ResolvedNumber>();
  readonly #byDisplay = new Map<string, string>();
  readonly #o: NumberDefaults;
  readonly #defaults: PaceSettings;

  constructor(o: NumberDefaults) {
    this.#o = o;
    targetOf(o.baseUrl, '/messages');
    this.#defaults = { sendRate: rate(o.sendRate ?? DEFAULT_SEND_RATE, 'sendRate'), userPaceMs: pace(o.userPaceMs ?? 0, 'userPaceMs') };
    token(o.token, 'token');
    if (o.defaultNumberId !== undefined && !NUMBER_ID.test(o.defaultNumberId)) throw new ConfigError('defaultNumberId', 'must be a phone_number_id: digits only');
    (o.numbers ?? []).forEach((n, i) => this.#add(n, `numbers[${i}]`));
  }

  /** The number a message from `from` (or with `numberId`) goes out of, or why there is none. */
  resolve(numberId: string | undefined, from: string | undefined): { ok: true; number: ResolvedNumber } | { ok: false; reason: string } {
    const id = numberId ?? (from === undefined ? undefined : this.#byDisplay.get(from)) ?? this.#o.defaultNumberId;
    if (id === undefined) {
      const who = from === undefined ? 'the sending business number' : `the business number ${from}`;
      return { ok: false, reason: `No Cloud API phone_number_id is known for ${who}: give the bot a phoneNumberId, list the number with its phone_number_id, or set a default one` };
    }
    if (!NUMBER_ID.test(id)) return { ok: false, reason: `"${id.slice(0, 40)}" is not a Cloud API phone_number_id (digits only)` };
    return { ok: true, number: this.#byId.get(id) ?? this.#unlisted(id) };
  }

  /** The pace of a number, listed or not. */
  pace(numberId: string): PaceSettings {
    return this.#byId.get(numberId) ?? this.#defaults;
  }

  /** Every configured token, to redact from whatever is kept or logged. */
  secrets(): string[] {
    return [this.#o.token, ...(this.#o.numbers ?? []).map((n) => n.token)].filter((t): t is string => t !== undefined && t !== '');
  }

  #add(n: CloudApiNumber, at: string): void {
    if (!NUMBER_ID.test(n.numberId)) throw new ConfigError(`${at}.numberId`, 'must be a phone_number_id: digits only');
    if (this.#byId.has(n.numberId)) throw new ConfigError(`${at}.numberId`, `${n.numberId} is listed twice`);
    if (n.displayNumber !== undefined) {
      if (!/^[0-9]{6,20}$/.test(n.displayNumber)) throw new ConfigError(`${at}.displayNumber`, 'must be digits only (country code and number, no "+")');
      if (this.#byDisplay.has(n.displayNumber)) throw new ConfigError(`${at}.displayNumber`, `${n.displayNumber} is listed twice`);
      this.#byDisplay.set(n.displayNumber, n.numberId);
    }
    token(n.token, `${at}.token`);
    this.#byId.set(n.numberId, {
      numberId: n.numberId,
      token: n.token ?? this.#o.token,
      tokenName: n.tokenName ?? (n.token !== undefined ? `${at}.token` : (this.#o.tokenName ?? DEFAULT_TOKEN_NAME)),
      sendRate: rate(n.sendRate ?? this.#defaults.sendRate, `${at}.sendRate`),
      userPaceMs: pace(n.userPaceMs ?? this.#defaults.userPaceMs, `${at}.userPaceMs`),
      target: targetOf(this.#o.baseUrl, `${n.numberId}/messages`),
    });
  }

  /** A number nobody listed: the provider's token and pace. Kept, so its target is built once. */
  #unlisted(numberId: string): ResolvedNumber {
    const number: ResolvedNumber = {
      numberId,
      token: this.#o.token,
      tokenName: this.#o.tokenName ?? DEFAULT_TOKEN_NAME,
      ...this.#defaults,
      target: targetOf(this.#o.baseUrl, `${numberId}/messages`),
    };
    this.#byId.set(numberId, number);
    return number;
  }
}

function rate(v: number, option: string): number {
  if (!Number.isFinite(v) || v <= 0) throw new ConfigError(option, 'must be a number of messages per second > 0');
  return v;
}

function pace(v: number, option: string): number {
  if (!Number.isFinite(v) || v < 0) throw new ConfigError(option, 'must be a number of milliseconds ≥ 0');
  return v;
}

function token(v: string | undefined, option: string): void {
  if (v !== undefined && v.trim() === '') throw new ConfigError(option, 'must not be empty (leave it out to use the default token)');
}
