/**
 * The WhatsApp Flow endpoint, without HTTP: a raw request body in, a status and body out. In
 * Meta's order: the signature (432), the decryption (421), the answer from the conversation (427
 * when the flow token is no longer valid), the encrypted reply. Decrypted payloads never reach a
 * log: lines name the action, the screen, the outcome and why, never the data.
 */
import type { KeyObject } from 'node:crypto';
import type { FlowReply, FlowRequest } from '../conversation/flow-wire.js';
import { errorInfo, silentLogger, type Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { decryptFlowRequest, encryptFlowResponse, FlowDecryptError } from './crypto.js';
import { verifyFlowSignature } from './signature.js';

/** Where the endpoint's keys and secrets come from, per phone number. */
export interface FlowEndpointNumber {
  /** This number's own private key (else the default one). */
  readonly key?: KeyObject | undefined;
  /** This number's app secrets (else the default ones). */
  readonly secrets?: readonly string[] | undefined;
}

/** What the endpoint is built from. */
export interface FlowEndpointOptions {
  /** Answers decrypted requests: the runtime's `flows`. */
  readonly exchange: { handle(req: FlowRequest): Promise<FlowReply> };
  /** The private key of `POST /flows` (and of numbers without their own), or a function making it on first use; undefined: none configured. */
  readonly key: KeyObject | (() => KeyObject) | undefined;
  /** Why there is no key, for the 503 (names the variable to set). */
  readonly noKey?: string | undefined;
  /** App secrets a signature may match (two while one is rotated); empty: signatures are not checked. */
  readonly secrets: readonly string[];
  /** The phone numbers this deployment serves, by `phone_number_id`, for `POST /flows/:phoneNumberId`. */
  readonly numbers?: ReadonlyMap<string, FlowEndpointNumber> | undefined;
  readonly metrics?: Metrics | undefined;
  readonly logger?: Logger | undefined;
}

/** An HTTP answer: its status, content type and body. */
export interface FlowHttpAnswer {
  readonly status: number;
  readonly contentType: 'text/plain' | 'application/json';
  readonly body: string;
}

/** One request, as HTTP gave it. */
export interface FlowHttpRequest {
  readonly raw: Buffer;
  /** `X-Hub-Signature-256`. */
  readonly signature: string | undefined;
  /** `POST /flows/:phoneNumberId`'s number; undefined for `POST /flows`. */
  readonly phoneNumberId?: string | undefined;
}

const json = (status: number, body: unknown): FlowHttpAnswer => ({ status, contentType: 'application/json', body: JSON.stringify(body) });

/** Answers Flow endpoint requests. */
export class FlowEndpoint {
  private readonly logger: Logger;

  constructor(private readonly o: FlowEndpointOptions) {
    this.logger = o.logger ?? silentLogger;
  }

  /** Answers one request; never throws. */
  async answer(r: FlowHttpRequest): Promise<FlowHttpAnswer> {
    const started = performance.now();
    let action = 'unknown';
    let outcome: string;
    let answer: FlowHttpAnswer;
    try {
      const res = await this.run(r, (a) => {
        action = a;
      });
      ({ outcome, answer } = res);
    } catch (err) {
      this.logger.error({ err: errorInfo(err), action }, 'the Flow endpoint failed');
      outcome = 'unavailable';
      answer = json(500, { error: 'the Flow endpoint failed; see the server log' });
    }
    this.o.metrics?.inc('colloquy_flow_requests_total', { action, outcome });
    this.o.metrics?.observe('colloquy_flow_seconds', { action }, (performance.now() - started) / 1000);
    return answer;
  }

  private async run(r: FlowHttpRequest, seen: (action: string) => void): Promise<{ outcome: string; answer: FlowHttpAnswer }> {
    const number = r.phoneNumberId === undefined ? undefined : this.o.numbers?.get(r.phoneNumberId);
    if (r.phoneNumberId !== undefined && number === undefined) {
      return { outcome: 'bad_request', answer: json(404, { error: `no number with phone_number_id ${r.phoneNumberId} is served here` }) };
    }
    const secrets = number?.secrets ?? this.o.secrets;
    if (secrets.length > 0 && !verifyFlowSignature(r.raw, r.signature, secrets)) {
      this.logger.warn({ number: r.phoneNumberId, signed: r.signature !== undefined }, 'a Flow request’s signature matches no app secret; answered 432');
      return { outcome: 'signature', answer: json(432, { error: r.signature === undefined ? 'missing X-Hub-Signature-256' : 'X-Hub-Signature-256 does not match the app secret' }) };
    }
    const given = number?.key ?? this.o.key;
    const key = typeof given === 'function' ? given() : given;
    if (key === undefined) return { outcome: 'unavailable', answer: json(503, { error: this.o.noKey ?? 'no Flow endpoint key is configured (COLLOQUY_FLOW_PRIVATE_KEY)' }) };
    let decrypted: ReturnType<typeof decryptFlowRequest>;
    try {
      decrypted = decryptFlowRequest(parseEnvelope(r.raw), key);
    } catch (err) {
      if (!(err instanceof FlowDecryptError)) throw err;
      this.logger.warn({ number: r.phoneNumberId, reason: err.reason, why: err.message }, 'a Flow request could not be decrypted; answered 421 (WhatsApp fetches the public key again and retries)');
      return { outcome: 'decrypt', answer: json(421, { error: err.message }) };
    }
    const req = decrypted.payload as FlowRequest;
    const error = typeof req === 'object' && req !== null && typeof req.data === 'object' && req.data !== null && 'error' in req.data;
    seen(error ? 'error' : typeof req?.action === 'string' && ['ping', 'INIT', 'BACK', 'data_exchange'].includes(req.action) ? req.action : 'unknown');
    const reply = await this.o.exchange.handle(req);
    if (reply.status === 427) {
      this.logger.info({ action: req.action, screen: req.screen, why: reply.why }, 'a Flow request’s token is no longer valid; answered 427');
      return { outcome: reply.outcome, answer: json(427, reply.body) };
    }
    if (reply.status !== 200) return { outcome: reply.outcome, answer: json(reply.status, reply.body) };
    return { outcome: reply.outcome, answer: { status: 200, contentType: 'text/plain', body: encryptFlowResponse(reply.body, decrypted.aesKey, decrypted.iv) } };
  }
}

/** The JSON envelope; anything else is for the decryption to refuse (421), as WhatsApp expects. */
function parseEnvelope(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}
