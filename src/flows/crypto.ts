/**
 * The WhatsApp Flow endpoint's cryptography, as Meta's reference sample does it
 * (`examples/endpoint/nodejs/basic/src/encryption.js` in WhatsApp/WhatsApp-Flows-Tools): the AES
 * key is unwrapped with RSA-OAEP (SHA-256 for the hash and MGF1), the request is AES-128-GCM under
 * the 16-byte IV as given with the 16-byte tag appended, and the reply is encrypted with the same
 * key under the IV with every bit inverted.
 */
import { createCipheriv, createDecipheriv, constants, privateDecrypt, type KeyObject } from 'node:crypto';
import { ColloquyError } from '../errors.js';

/** The three base64 fields WhatsApp posts to a Flow endpoint. */
export interface EncryptedFlowRequest {
  readonly encrypted_flow_data: string;
  readonly encrypted_aes_key: string;
  readonly initial_vector: string;
}

/** A request once decrypted, with what its reply is encrypted with. */
export interface DecryptedFlowRequest {
  /** The parsed JSON: `{ version, action, screen?, data?, flow_token }` when WhatsApp sent it. */
  readonly payload: unknown;
  /** The 16-byte AES key the client chose for this request. */
  readonly aesKey: Buffer;
  /** The 16-byte IV the request came with (the reply uses it inverted). */
  readonly iv: Buffer;
}

/** Why a request could not be decrypted; the endpoint answers it with HTTP 421. */
export type FlowDecryptReason = 'malformed' | 'key' | 'data' | 'json';

/**
 * A Flow request that cannot be decrypted: not the expected shape, an AES key this private key
 * cannot unwrap, a ciphertext whose tag does not check, or a plaintext that is not JSON. WhatsApp
 * answers the endpoint's 421 by fetching the public key again and retrying with a new AES key and
 * IV. The message names the reason only: never a decrypted byte or any key material.
 */
export class FlowDecryptError extends ColloquyError {
  override name = 'FlowDecryptError';
  /** Which step failed. */
  readonly reason: FlowDecryptReason;
  /** The HTTP status Meta expects for it. */
  readonly status = 421;
  constructor(reason: FlowDecryptReason, message: string) {
    // No `cause`: node's errors can quote the input, and this one must not carry it to a log.
    super('flow_decrypt', message);
    this.reason = reason;
  }
}

const AES_KEY_BYTES = 16;
const IV_BYTES = 16;
const TAG_BYTES = 16;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decrypts a Flow request with the endpoint's private key.
 *
 * @throws {@link FlowDecryptError} on any failure (bad base64, a key that does not match, a tag
 * that does not check, a plaintext that is not JSON).
 */
export function decryptFlowRequest(body: unknown, privateKey: KeyObject): DecryptedFlowRequest {
  const fields = requestFields(body);
  const wrappedKey = base64Field(fields.encrypted_aes_key, 'encrypted_aes_key');
  const iv = base64Field(fields.initial_vector, 'initial_vector');
  const data = base64Field(fields.encrypted_flow_data, 'encrypted_flow_data');
  if (iv.length !== IV_BYTES) throw new FlowDecryptError('malformed', `initial_vector is ${iv.length} bytes, not ${IV_BYTES}`);
  if (data.length < TAG_BYTES) throw new FlowDecryptError('malformed', `encrypted_flow_data is ${data.length} bytes, shorter than its ${TAG_BYTES}-byte tag`);
  const aesKey = unwrapKey(wrappedKey, privateKey);
  const plaintext = openGcm(data, aesKey, iv);
  return { payload: parseJson(plaintext), aesKey, iv };
}

/**
 * Encrypts a reply to a request decrypted with {@link decryptFlowRequest}: AES-128-GCM with the
 * request's key, its IV with every bit inverted, no AAD, the tag appended; base64, as the endpoint
 * sends it (`text/plain`).
 */
export function encryptFlowResponse(response: unknown, aesKey: Buffer, iv: Buffer): string {
  return sealGcm(Buffer.from(JSON.stringify(response), 'utf8'), aesKey, invertIv(iv)).toString('base64');
}

/** The IV with every bit inverted, as the reply is encrypted under. */
export function invertIv(iv: Buffer): Buffer {
  return Buffer.from(iv.map((byte) => ~byte & 0xff));
}

/** AES-128-GCM with the tag appended, as both directions of the protocol carry it. */
export function sealGcm(plaintext: Buffer, aesKey: Buffer, iv: Buffer): Buffer {
  const cipher = createCipheriv('aes-128-gcm', aesKey, iv);
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/** Opens {@link sealGcm}'s output; throws {@link FlowDecryptError} when the tag does not check. */
export function openGcm(sealed: Buffer, aesKey: Buffer, iv: Buffer): Buffer {
  try {
    const decipher = createDecipheriv('aes-128-gcm', aesKey, iv);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
  } catch {
    throw new FlowDecryptError('data', 'encrypted_flow_data does not authenticate under this AES key and IV');
  }
}

function requestFields(body: unknown): Record<keyof EncryptedFlowRequest, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new FlowDecryptError('malformed', 'the request body is not a JSON object');
  const b = body as Record<string, unknown>;
  return { encrypted_flow_data: b.encrypted_flow_data, encrypted_aes_key: b.encrypted_aes_key, initial_vector: b.initial_vector };
}

function base64Field(value: unknown, name: keyof EncryptedFlowRequest): Buffer {
  if (typeof value !== 'string' || value === '') throw new FlowDecryptError('malformed', `${name} is missing or not a string`);
  // Node's decoder skips what is not base64; re-encoding catches that (padding may be left off).
  const bytes = Buffer.from(value, 'base64');
  if (!BASE64.test(value) || bytes.toString('base64').replace(/=+$/, '') !== value.replace(/=+$/, '')) throw new FlowDecryptError('malformed', `${name} is not base64`);
  return bytes;
}

function unwrapKey(wrapped: Buffer, privateKey: KeyObject): Buffer {
  let key: Buffer;
  try {
    key = privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, wrapped);
  } catch {
    throw new FlowDecryptError('key', 'encrypted_aes_key cannot be unwrapped with this private key (RSA-OAEP, SHA-256)');
  }
  if (key.length !== AES_KEY_BYTES) throw new FlowDecryptError('key', `the unwrapped AES key is ${key.length} bytes, not ${AES_KEY_BYTES}`);
  return key;
}

function parseJson(plaintext: Buffer): unknown {
  try {
    return JSON.parse(plaintext.toString('utf8'));
  } catch {
    throw new FlowDecryptError('json', 'the decrypted flow data is not JSON');
  }
}
