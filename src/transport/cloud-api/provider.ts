/**
 * Meta's WhatsApp Cloud API as a {@link Provider}: messages go to
 * `POST {baseUrl}/{phone_number_id}/messages` with a bearer access token (a system user's: no OAuth
 * exchange), each number with its own token and pace; text and templates on the WhatsApp channel,
 * read receipts with a typing indicator, and SMS through another adapter when one is given.
 */
import { statusClass } from './classify.js';
import { systemClock } from '../clock.js';
import { HttpClient, asRecord, type HttpPoster } from '../http.js';
import { emit, redact, type ObserverOptions } from '../log.js';
import type { FailureClass, Provider, ProviderFeatures, ReadReceipt } from '../provider.js';
import { resolveRetry, type RetryOptions } from '../retry.js';
import type { Channel, Clock, Outbound, SendAdapter, SendFailed, SendResult } from '../types.js';
import { toCloudMessage } from './body.js';
import { callCloud, type CloudContext } from './call.js';
import { NumberBook, type CloudApiNumber } from './numbers.js';
import { Pacer } from './pace.js';

/** Settings of {@link createCloudApiProvider}. */
export interface CloudApiProviderOptions extends ObserverOptions {
  /** The Graph API's base URL with its version, e.g. `https://graph.facebook.com/v23.0`. */
  readonly baseUrl: string;
  /** The access token of every number that has none of its own. Never logged nor kept in a result. */
  readonly token?: string | undefined;
  /** What that token is called in errors (default `COLLOQUY_CLOUD_API_TOKEN`). */
  readonly tokenName?: string | undefined;
  /** Numbers with their own token, name, send rate or pace; any other `phone_number_id` uses the defaults. */
  readonly numbers?: readonly CloudApiNumber[] | undefined;
  /** The `phone_number_id` of a message that names none and whose `from` is not a listed `displayNumber`. */
  readonly defaultNumberId?: string | undefined;
  /** Messages per second from each number (default 80; 1,000 for an upgraded number). The burst is one second's worth. */
  readonly sendRate?: number | undefined;
  /** Least ms between two messages to one user from one number (default 0: paced only after a 131056). */
  readonly userPaceMs?: number | undefined;
  /** Carries `channel: 'sms'` sends (e.g. `createHttpAdapter` with the seed provider's SMS credentials); absent: no SMS. Closed with the provider. */
  readonly sms?: SendAdapter | undefined;
  /** Connect, headers and body timeout of each request (default 10 s). */
  readonly timeoutMs?: number | undefined;
  /** Most connections to the Graph API (default 64). */
  readonly connections?: number | undefined;
  /** Retries of 131000, 5xx, network errors and timeouts, and of 130429 and 131056 after their pause (default: 3 attempts, 200 ms base, 5 s cap, `Retry-After` up to 15 s). */
  readonly retry?: RetryOptions | undefined;
  readonly clock?: Clock | undefined;
  /** An HTTP client to use instead of the provider's own (which `close()` would then leave open). */
  readonly http?: HttpPoster | undefined;
}

/**
 * Creates the Cloud API provider. `send()` and `markRead()` never throw: a failure is a
 * {@link SendFailed} with its {@link FailureClass}. Throws ConfigError for bad options (a base URL
 * that is not http(s), a `phone_number_id` that is not digits, a rate that is not positive).
 */
export function createCloudApiProvider(options: CloudApiProviderOptions): Provider {
  const clock = options.clock ?? systemClock;
  const book = new NumberBook(options);
  const retry = resolveRetry(options.retry);
  const own = options.http ? undefined : new HttpClient({ timeoutMs: options.timeoutMs, connections: options.connections });
  const pacer = new Pacer(clock, (id) => book.pace(id));
  const ctx: CloudContext = { http: options.http ?? own!, clock, retry, pacer, secrets: book.secrets(), onEvent: options.onEvent, logger: options.logger };
  const features: ProviderFeatures = { text: true, templates: true, window: true, readReceipts: true, sms: options.sms !== undefined };

  /** One message on the WhatsApp channel: from its number, with its token, at its pace. */
  async function sendMessage(outbound: Extract<Outbound, { channel: 'interactive' }>, signal: AbortSignal | undefined): Promise<SendResult> {
    const request = asRecord(outbound.request);
    const to = request?.['to'];
    if (request?.['messaging_product'] !== 'whatsapp' || typeof to !== 'string') {
      return local('interactive', 'invalid', 'The request is not a Cloud API message body (messaging_product "whatsapp" and "to"): build it with this provider\u2019s request()');
    }
    const found = book.resolve(outbound.numberId, outbound.from);
    if (!found.ok) return local('interactive', 'invalid', found.reason);
    const { number } = found;
    if (number.token === undefined) return local('interactive', 'auth', `No Cloud API access token for phone_number_id ${number.numberId}: set ${number.tokenName}`);
    return callCloud(ctx, { number, token: number.token, body: JSON.stringify(request), to, signal });
  }

  async function send(outbound: Outbound, opts: { signal?: AbortSignal } = {}): Promise<SendResult> {
    const started = clock.now();
    let result: SendResult;
    try {
      if (outbound.channel === 'interactive') result = await sendMessage(outbound, opts.signal);
      else if (options.sms === undefined)
        result = local('sms', 'invalid', 'No SMS channel is configured for the Cloud API provider: give it an SMS adapter (the seed provider\u2019s SMS credentials)');
      else result = await options.sms.send(outbound, opts);
    } catch (err) {
      // Only a throwing SMS adapter (or a bug) gets here: send() still answers.
      result = local(outbound.channel, 'transient', `The send failed unexpectedly: ${redact(err instanceof Error ? err.message : String(err), ctx.secrets)}`, 'retryable');
    }
    emit(options, { type: 'send', channel: outbound.channel, ok: result.ok, ms: clock.now() - started, status: result.status });
    if (!result.ok) warn('send failed', result, outbound.channel === 'interactive' ? outbound.numberId : undefined);
    return result;
  }

  /**
   * Marks a user's message read and, with `typing`, shows the typing indicator, in one call.
   * Not a message: it does not wait on the number's send rate behind queued sends, nor on the
   * user's pace; it retries passing faults like a send. Never throws.
   */
  async function markRead(receipt: ReadReceipt): Promise<SendResult> {
    let result: SendResult;
    try {
      result = await read(receipt);
    } catch (err) {
      result = local('interactive', 'transient', `The read receipt failed unexpectedly: ${redact(err instanceof Error ? err.message : String(err), ctx.secrets)}`, 'retryable');
    }
    if (!result.ok) warn('read receipt failed', result, receipt.numberId);
    return result;
  }

  async function read(receipt: ReadReceipt): Promise<SendResult> {
    if (typeof receipt.messageId !== 'string' || receipt.messageId === '') return local('interactive', 'invalid', 'A read receipt needs the id of the user\u2019s message (messageId)');
    const found = book.resolve(receipt.numberId, receipt.from);
    if (!found.ok) return local('interactive', 'invalid', found.reason);
    const { number } = found;
    if (number.token === undefined) return local('interactive', 'auth', `No Cloud API access token for phone_number_id ${number.numberId}: set ${number.tokenName}`);
    const body = { messaging_product: 'whatsapp', status: 'read', message_id: receipt.messageId, ...(receipt.typing && { typing_indicator: { type: 'text' } }) };
    return callCloud(ctx, { number, token: number.token, body: JSON.stringify(body) });
  }

  function warn(what: string, r: SendFailed, numberId: string | undefined): void {
    const { channel, status, providerCode: code, kind, attempts, auth } = r;
    options.logger?.warn({ channel, numberId, status, code, class: r.class, kind, attempts, auth }, `${what}: ${r.reason}`);
  }

  return {
    name: 'cloud-api',
    features,
    request: (message, address) => toCloudMessage(message, address),
    send,
    markRead,
    statusClass,
    async close() {
      await Promise.all([own?.close(), options.sms?.close()]);
    },
  };
}

/** A failure decided here, before any request: nothing was sent. */
function local(channel: Channel, cls: FailureClass, reason: string, kind: 'permanent' | 'retryable' = 'permanent'): SendFailed {
  return { ok: false, channel, kind, class: cls, reason, attempts: 0, ...(cls === 'auth' && { auth: true }) };
}
