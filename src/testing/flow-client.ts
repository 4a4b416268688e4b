/**
 * `FlowClient`: plays WhatsApp's side of a Flow endpoint in tests. Each request gets a fresh AES
 * key and IV, the key wrapped for the endpoint's PUBLIC key with RSA-OAEP-SHA256, the payload
 * sealed with AES-128-GCM (tag appended), the raw body signed in `X-Hub-Signature-256` with the app
 * secret; the answer is opened with the same key under the inverted IV, as WhatsApp does.
 */
import { constants, createPublicKey, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { ColloquyError } from '../errors.js';
import { invertIv, openGcm, sealGcm } from '../flows/crypto.js';
import { signFlowBody } from '../flows/signature.js';

/** The Data API version the convenience methods send. */
export const FLOW_DATA_API_VERSION = '3.0';

/** Where and how a {@link FlowClient} posts. */
export interface FlowClientOptions {
  /** The endpoint's URL (in tests, on 127.0.0.1). */
  readonly url: string;
  /** The endpoint's public key: SPKI PEM text (as `colloquy flows keygen` prints it) or a key object. */
  readonly publicKey: string | KeyObject;
  /** The app secret the body is signed with; without it no `X-Hub-Signature-256` is sent. */
  readonly appSecret?: string;
}

/** What one request may do differently, to exercise the endpoint's refusals. */
export interface FlowSendOptions {
  /** Sign with this secret instead (a wrong one gets 432), or `null` to send no signature. */
  readonly appSecret?: string | null;
  /** Wrap the AES key for this public key instead (one the endpoint does not hold gets 421). */
  readonly publicKey?: string | KeyObject;
}

/** The endpoint's answer. */
export interface FlowResponse {
  /** The HTTP status (200; 421 cannot decrypt, 427 token no longer valid, 432 bad signature…). */
  readonly status: number;
  /** The decrypted JSON answer: always on a 200, on another status when its body decrypts. */
  readonly body: unknown;
  /** The response body as sent (base64 ciphertext on a 200). */
  readonly raw: string;
}

/** The answer of a 200 that does not decrypt with the request's key under the inverted IV. */
export class FlowResponseError extends ColloquyError {
  override name = 'FlowResponseError';
  constructor(message: string) {
    super('flow_response', message);
  }
}

/**
 * Sends Flow endpoint requests as WhatsApp does and decrypts the answers.
 *
 * @example
 * const client = new FlowClient({ url: `${base}/flows`, publicKey, appSecret });
 * expect((await client.ping()).body).toEqual({ data: { status: 'active' } });
 * const opened = await client.init('flow-token', { day: 'mon' });
 * await client.submit('flow-token', 'SLOTS', { slot: '10:00' });
 * await client.replay(); // the same submit, a new AES key and IV
 */
export class FlowClient {
  readonly #options: FlowClientOptions;
  #last: { payload: unknown; options: FlowSendOptions } | undefined;

  constructor(options: FlowClientOptions) {
    this.#options = options;
  }

  /** Posts `payload` encrypted and signed; resolves to the decrypted answer. */
  async send(payload: unknown, options: FlowSendOptions = {}): Promise<FlowResponse> {
    this.#last = { payload, options };
    const aesKey = randomBytes(16);
    const iv = randomBytes(16);
    const raw = JSON.stringify(encryptRequest(payload, aesKey, iv, options.publicKey ?? this.#options.publicKey));
    const secret = options.appSecret === undefined ? this.#options.appSecret : options.appSecret;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (secret !== undefined && secret !== null) headers['x-hub-signature-256'] = signFlowBody(raw, secret);
    const res = await fetch(this.#options.url, { method: 'POST', headers, body: raw });
    const text = await res.text();
    return { status: res.status, body: decryptAnswer(res.status, text, aesKey, iv), raw: text };
  }

  /** Sends the last payload again, with the same options but a new AES key and IV, as WhatsApp retries. */
  async replay(): Promise<FlowResponse> {
    if (this.#last === undefined) throw new ColloquyError('usage', 'FlowClient.replay(): nothing has been sent yet');
    return this.send(this.#last.payload, this.#last.options);
  }

  /** The health check WhatsApp sends (`action: "ping"`). */
  ping(options?: FlowSendOptions): Promise<FlowResponse> {
    return this.send({ version: FLOW_DATA_API_VERSION, action: 'ping' }, options);
  }

  /** Opening the flow (`action: "INIT"`). */
  init(flowToken: string, data?: Record<string, unknown>, options?: FlowSendOptions): Promise<FlowResponse> {
    return this.send({ version: FLOW_DATA_API_VERSION, action: 'INIT', flow_token: flowToken, ...(data !== undefined && { data }) }, options);
  }

  /** Going back to `screen` (`action: "BACK"`). */
  back(flowToken: string, screen: string, options?: FlowSendOptions): Promise<FlowResponse> {
    return this.send({ version: FLOW_DATA_API_VERSION, action: 'BACK', screen, flow_token: flowToken }, options);
  }

  /** Submitting `screen` with its data (`action: "data_exchange"`). */
  submit(flowToken: string, screen: string, data: Record<string, unknown>, options?: FlowSendOptions): Promise<FlowResponse> {
    return this.send({ version: FLOW_DATA_API_VERSION, action: 'data_exchange', screen, data, flow_token: flowToken }, options);
  }
}

function encryptRequest(payload: unknown, aesKey: Buffer, iv: Buffer, publicKey: string | KeyObject): Record<string, string> {
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  return {
    encrypted_flow_data: sealGcm(Buffer.from(JSON.stringify(payload), 'utf8'), aesKey, iv).toString('base64'),
    encrypted_aes_key: publicEncrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, aesKey).toString('base64'),
    initial_vector: iv.toString('base64'),
  };
}

/** The decrypted answer: required on a 200; on another status the body as it decrypts, else as JSON (a 427's `{ error_msg }`), else undefined. */
function decryptAnswer(status: number, text: string, aesKey: Buffer, iv: Buffer): unknown {
  try {
    const sealed = Buffer.from(text.trim(), 'base64');
    if (sealed.length < 16) throw new Error('short');
    return JSON.parse(openGcm(sealed, aesKey, invertIv(iv)).toString('utf8'));
  } catch {
    if (status !== 200) return jsonOrUndefined(text);
    throw new FlowResponseError(`the endpoint answered 200 with a body that does not decrypt under the request's key and inverted IV (${text.length} characters)`);
  }
}

function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
