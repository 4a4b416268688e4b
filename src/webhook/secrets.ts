/**
 * The secrets webhooks are signed with. One Meta app signs the webhooks of its own numbers with its
 * app secret, so with several apps a body is accepted when its signature matches any configured
 * secret, and then only when every number it is about belongs to an app whose secret matched: a
 * number's own `appSecret` (numbers file), else the default secret. Otherwise one app's secret
 * could write into another app's numbers.
 */
import type { Request } from 'express';
import { ConfigError } from '../errors.js';
import { NUMBERS_FILE_VARIABLE } from '../numbers/parse.js';
import type { NumberConfig, NumbersConfig } from '../numbers/types.js';
import { matchingSecrets } from './body.js';
import { WebhookError } from './errors.js';
import { digitsOf } from './numbers.js';

/** A number a payload is about, and where it says so (`entry[0].changes[1].value.metadata`). */
export interface PayloadNumber {
  readonly phoneNumberId?: string | undefined;
  readonly displayNumber: string;
  readonly path: string;
}

/** The secrets a signature may match, and which numbers each may speak for. */
export class WebhookSecrets {
  private readonly all: readonly string[];
  private readonly byPhoneNumberId = new Map<string, NumberConfig>();
  private readonly byDisplayNumber = new Map<string, NumberConfig>();

  /**
   * `fallback` is the default secret (COLLOQUY_WEBHOOK_SECRET). Throws ConfigError when some
   * numbers have an app secret while another has none and there is no default: that number's
   * webhooks could never be accepted.
   */
  constructor(
    private readonly fallback: string | undefined,
    numbers?: NumbersConfig,
  ) {
    const list = numbers?.numbers ?? [];
    for (const n of list) {
      this.byPhoneNumberId.set(n.phoneNumberId, n);
      this.byDisplayNumber.set(n.displayNumber, n);
    }
    const own = list.flatMap((n) => (n.appSecret === undefined ? [] : [n.appSecret]));
    this.all = [...new Set([...(fallback === undefined ? [] : [fallback]), ...own])];
    const bare = list.findIndex((n) => n.appSecret === undefined);
    if (fallback === undefined && own.length > 0 && bare !== -1) {
      throw new ConfigError(
        NUMBERS_FILE_VARIABLE,
        `numbers[${bare}] (${list[bare]!.displayNumber}) has no appSecret and no default webhook secret (COLLOQUY_WEBHOOK_SECRET) is set, while other numbers' webhooks are signed: its webhooks would always be refused; give it an appSecret or set the default`,
      );
    }
  }

  /** Whether signatures are checked at all (some secret is configured). */
  get checked(): boolean {
    return this.all.length > 0;
  }

  /**
   * Checks `X-Hub-Signature-256` against every secret; returns those that match (throws 401 when
   * none does). Call only when {@link checked}.
   */
  verify(req: Request, raw: Buffer): ReadonlySet<string> {
    return new Set(matchingSecrets(req, raw, this.all));
  }

  /** Throws 401 unless each number's app secret is among those the signature matched. */
  requireOwners(matched: ReadonlySet<string>, numbers: readonly PayloadNumber[]): void {
    for (const n of numbers) {
      const secret = this.secretOf(n);
      if (secret !== undefined && matched.has(secret)) continue;
      const id = n.phoneNumberId === undefined || n.phoneNumberId === '' ? '' : ` (phone_number_id ${n.phoneNumberId})`;
      throw new WebhookError(
        401,
        'signature_wrong_app',
        `The X-Hub-Signature-256 signature does not match the app of number ${digitsOf(n.displayNumber)}${id} at ${n.path}: each number's webhooks must be signed with its own app's secret`,
      );
    }
  }

  /** Throws 401 unless the signature matched the default secret (COLLOQUY_WEBHOOK_SECRET), when there is one: the seed relay's inbound SMS. */
  requireDefault(matched: ReadonlySet<string>): void {
    if (this.fallback === undefined || matched.has(this.fallback)) return;
    throw new WebhookError(401, 'signature_wrong_app', 'The X-Hub-Signature-256 signature of an inbound SMS must be made with COLLOQUY_WEBHOOK_SECRET (the relay’s secret), not a number’s app secret');
  }

  /** The secret of a number's app: its own, found by phone_number_id then display number, else the default. */
  private secretOf(n: PayloadNumber): string | undefined {
    const config = (n.phoneNumberId !== undefined && this.byPhoneNumberId.get(n.phoneNumberId)) || this.byDisplayNumber.get(digitsOf(n.displayNumber));
    return config?.appSecret ?? this.fallback;
  }
}
