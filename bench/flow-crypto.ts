/**
 * The Flow endpoint's protocol written again with node:crypto alone, for the `flows` part: the
 * load generator's side (WhatsApp's: wrap a fresh AES key with RSA-OAEP-SHA256, seal the payload
 * with AES-128-GCM, sign the body, open the answer under the inverted IV) and the baseline
 * endpoint's side (check the signature, unwrap, open, seal the answer). Written apart from
 * Colloquy's src/flows on purpose: the baseline must not share Colloquy's code, and the bench's
 * check that every answer decrypts must not trust Colloquy's own decryption.
 */
import { constants, createCipheriv, createDecipheriv, createHmac, privateDecrypt, publicEncrypt, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';

const TAG = 16;

/** `X-Hub-Signature-256` of a raw body. */
export function signFlow(raw: string | Buffer, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;
}

/** Whether `header` is `raw`'s signature under `secret` (constant time). */
export function signatureMatches(raw: Buffer, header: string | undefined, secret: string): boolean {
  const given = Buffer.from(typeof header === 'string' ? header.trim().toLowerCase() : '');
  const expected = Buffer.from(signFlow(raw, secret));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const invert = (iv: Buffer): Buffer => Buffer.from(iv.map((b) => ~b & 0xff));

function seal(plain: Buffer, key: Buffer, iv: Buffer): Buffer {
  const c = createCipheriv('aes-128-gcm', key, iv);
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
}

function open(sealed: Buffer, key: Buffer, iv: Buffer): Buffer {
  const d = createDecipheriv('aes-128-gcm', key, iv);
  d.setAuthTag(sealed.subarray(sealed.length - TAG));
  return Buffer.concat([d.update(sealed.subarray(0, sealed.length - TAG)), d.final()]);
}

/** A request as WhatsApp sends it: the body, its signature, and what its answer opens with. */
export interface SealedRequest {
  readonly body: string;
  readonly signature: string;
  readonly aesKey: Buffer;
  readonly iv: Buffer;
}

/** Encrypts and signs `payload` for an endpoint holding `publicKey`'s private half; a fresh AES key and IV every time. */
export function sealRequest(payload: unknown, publicKey: KeyObject, secret: string): SealedRequest {
  const aesKey = randomBytes(16);
  const iv = randomBytes(16);
  const body = JSON.stringify({
    encrypted_flow_data: seal(Buffer.from(JSON.stringify(payload)), aesKey, iv).toString('base64'),
    encrypted_aes_key: publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, aesKey).toString('base64'),
    initial_vector: iv.toString('base64'),
  });
  return { body, signature: signFlow(body, secret), aesKey, iv };
}

/** Opens an answer (base64, AES-128-GCM under the inverted IV); throws when it does not authenticate or is not JSON. */
export function openAnswer(text: string, r: Pick<SealedRequest, 'aesKey' | 'iv'>): unknown {
  const sealed = Buffer.from(text.trim(), 'base64');
  if (sealed.length <= TAG) throw new Error(`the answer is ${sealed.length} bytes, not a sealed message`);
  return JSON.parse(open(sealed, r.aesKey, invert(r.iv)).toString('utf8'));
}

/** A request opened by an endpoint. */
export interface OpenedRequest {
  readonly payload: unknown;
  readonly aesKey: Buffer;
  readonly iv: Buffer;
}

/** Unwraps and opens a request body with the endpoint's private key; throws on anything wrong. */
export function openRequest(body: unknown, privateKey: KeyObject): OpenedRequest {
  const b = body as Record<string, unknown> | null;
  const field = (name: string): Buffer => {
    const v = b?.[name];
    if (typeof v !== 'string') throw new Error(`${name} is missing`);
    return Buffer.from(v, 'base64');
  };
  const aesKey = privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, field('encrypted_aes_key'));
  const iv = field('initial_vector');
  return { payload: JSON.parse(open(field('encrypted_flow_data'), aesKey, iv).toString('utf8')), aesKey, iv };
}

/** Seals an endpoint's answer with the request's key under the inverted IV, base64. */
export function sealAnswer(answer: unknown, r: Pick<OpenedRequest, 'aesKey' | 'iv'>): string {
  return seal(Buffer.from(JSON.stringify(answer)), r.aesKey, invert(r.iv)).toString('base64');
}
