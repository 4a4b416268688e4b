import { constants, createPublicKey, generateKeyPairSync, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ColloquyError } from '../../src/errors.js';
import { decryptFlowRequest, encryptFlowResponse, FlowDecryptError, invertIv, openGcm, sealGcm, type EncryptedFlowRequest } from '../../src/flows/crypto.js';
import { loadFlowPrivateKey } from '../../src/flows/keys.js';
import { signFlowBody, verifyFlowSignature } from '../../src/flows/signature.js';

interface VectorCase {
  name: string;
  raw_body: string;
  signature: string;
  request: EncryptedFlowRequest;
  decrypted: unknown;
  aes_key: string;
  response: unknown;
  encrypted_response: string;
}
const dir = join(import.meta.dirname, '../fixtures/flows');
const vectors = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8')) as { passphrase: string; app_secret: string; cases: VectorCase[] };
const privateKey = loadFlowPrivateKey(join(dir, 'test-private-key.pem'), vectors.passphrase);
const submit = vectors.cases.find((c) => c.name === 'submit')!;

/** Every secret the failure messages must not contain. */
function secretsOf(c: VectorCase): string[] {
  const aesKey = Buffer.from(c.aes_key, 'base64');
  return [aesKey.toString('hex'), aesKey.toString('base64'), vectors.passphrase, 'Ana', 'flow-token-test-1', 'MY_SCREEN'];
}

function expectDecryptError(fn: () => unknown, reason: FlowDecryptError['reason'], c: VectorCase = submit): FlowDecryptError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(FlowDecryptError);
  const err = caught as FlowDecryptError;
  expect(err).toBeInstanceOf(ColloquyError);
  expect(err.code).toBe('flow_decrypt');
  expect(err.status).toBe(421);
  expect(err.reason).toBe(reason);
  expect(err.cause).toBeUndefined();
  for (const secret of secretsOf(c)) expect(`${err.message}\n${err.stack}`).not.toContain(secret);
  return err;
}

function flipBit(base64: string, byteFromEnd: number): string {
  const bytes = Buffer.from(base64, 'base64');
  bytes[bytes.length - byteFromEnd]! ^= 0x01;
  return bytes.toString('base64');
}

describe("the Flow endpoint's cryptography, against vectors made with Meta's sample", () => {
  it.each(vectors.cases.map((c) => [c.name, c] as const))('decrypts the %s request to its payload, key and IV', (_name, c) => {
    const { payload, aesKey, iv } = decryptFlowRequest(c.request, privateKey);
    expect(payload).toEqual(c.decrypted);
    expect(aesKey.toString('base64')).toBe(c.aes_key);
    expect(iv.toString('base64')).toBe(c.request.initial_vector);
  });

  it.each(vectors.cases.map((c) => [c.name, c] as const))("encrypts the %s response to Meta's bytes", (_name, c) => {
    const { aesKey, iv } = decryptFlowRequest(c.request, privateKey);
    expect(encryptFlowResponse(c.response, aesKey, iv)).toBe(c.encrypted_response);
  });

  it('encrypts the reply under the inverted IV, which the request IV does not open', () => {
    const { aesKey, iv } = decryptFlowRequest(submit.request, privateKey);
    const sealed = Buffer.from(submit.encrypted_response, 'base64');
    expect(JSON.parse(openGcm(sealed, aesKey, invertIv(iv)).toString('utf8'))).toEqual(submit.response);
    expect(() => openGcm(sealed, aesKey, iv)).toThrow(FlowDecryptError);
    expect(invertIv(Buffer.from([0x00, 0xff, 0x0f, 0xa5]))).toEqual(Buffer.from([0xff, 0x00, 0xf0, 0x5a]));
  });

  it('refuses a flipped bit in the tag or in the ciphertext', () => {
    expectDecryptError(() => decryptFlowRequest({ ...submit.request, encrypted_flow_data: flipBit(submit.request.encrypted_flow_data, 1) }, privateKey), 'data');
    expectDecryptError(() => decryptFlowRequest({ ...submit.request, encrypted_flow_data: flipBit(submit.request.encrypted_flow_data, 17) }, privateKey), 'data');
  });

  it('refuses a key it does not hold, and a key wrapped without OAEP-SHA256', () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    expectDecryptError(() => decryptFlowRequest(submit.request, other), 'key');
    const sha1Wrapped = publicEncrypt({ key: createPublicKey(privateKey), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, randomBytes(16));
    expectDecryptError(() => decryptFlowRequest({ ...submit.request, encrypted_aes_key: sha1Wrapped.toString('base64') }, privateKey), 'key');
  });

  it('refuses a wrapped key that is not 128 bits', () => {
    const aes256 = publicEncrypt({ key: createPublicKey(privateKey), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, randomBytes(32));
    expectDecryptError(() => decryptFlowRequest({ ...submit.request, encrypted_aes_key: aes256.toString('base64') }, privateKey), 'key');
  });

  it('refuses an IV of the wrong length, garbage base64 and a body of the wrong shape', () => {
    expectDecryptError(() => decryptFlowRequest({ ...submit.request, initial_vector: randomBytes(12).toString('base64') }, privateKey), 'malformed');
    expectDecryptError(() => decryptFlowRequest({ ...submit.request, encrypted_flow_data: '%%% not base64 %%%' }, privateKey), 'malformed');
    expectDecryptError(() => decryptFlowRequest({ ...submit.request, encrypted_aes_key: 'ab$c' }, privateKey), 'malformed');
    expectDecryptError(
      () => decryptFlowRequest({ ...submit.request, encrypted_aes_key: `${submit.request.encrypted_aes_key.slice(0, 40)}\n${submit.request.encrypted_aes_key.slice(40)}` }, privateKey),
      'malformed',
    );
    expectDecryptError(() => decryptFlowRequest({ ...submit.request, encrypted_flow_data: 'AAAA' }, privateKey), 'malformed');
    expectDecryptError(() => decryptFlowRequest({ encrypted_flow_data: submit.request.encrypted_flow_data }, privateKey), 'malformed');
    expectDecryptError(() => decryptFlowRequest([submit.request], privateKey), 'malformed');
    expectDecryptError(() => decryptFlowRequest(null, privateKey), 'malformed');
  });

  it('reads base64 whose padding was left off', () => {
    const unpadded = Object.fromEntries(Object.entries(submit.request).map(([k, v]) => [k, v.replace(/=+$/, '')]));
    expect(decryptFlowRequest(unpadded, privateKey).payload).toEqual(submit.decrypted);
  });

  it('refuses a plaintext that is not JSON, without quoting it', () => {
    const aesKey = randomBytes(16);
    const iv = randomBytes(16);
    const request = {
      encrypted_flow_data: sealGcm(Buffer.from('{"flow_token": "flow-token-test-1", oops'), aesKey, iv).toString('base64'),
      encrypted_aes_key: publicEncrypt({ key: createPublicKey(privateKey), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, aesKey).toString('base64'),
      initial_vector: iv.toString('base64'),
    };
    const err = expectDecryptError(() => decryptFlowRequest(request, privateKey), 'json');
    expect(err.message).not.toContain('oops');
  });
});

describe('the Flow request signature', () => {
  const rotated = 'the-next-app-secret';

  it("accepts Meta's signature under the app secret, with another secret beside it in either order", () => {
    for (const c of vectors.cases) {
      expect(verifyFlowSignature(c.raw_body, c.signature, [vectors.app_secret])).toBe(true);
      expect(verifyFlowSignature(Buffer.from(c.raw_body), c.signature, [rotated, vectors.app_secret])).toBe(true);
      expect(verifyFlowSignature(c.raw_body, c.signature, [vectors.app_secret, rotated])).toBe(true);
    }
    expect(verifyFlowSignature(submit.raw_body, signFlowBody(submit.raw_body, rotated), [vectors.app_secret, rotated])).toBe(true);
    expect(verifyFlowSignature(submit.raw_body, submit.signature.toUpperCase().replace('SHA256=', 'sha256='), [vectors.app_secret])).toBe(true);
  });

  it('refuses another secret, another body, a missing or malformed header, and no secrets', () => {
    expect(verifyFlowSignature(submit.raw_body, submit.signature, [rotated])).toBe(false);
    expect(verifyFlowSignature(submit.raw_body, submit.signature, [])).toBe(false);
    expect(verifyFlowSignature(submit.raw_body, submit.signature, [''])).toBe(false);
    expect(verifyFlowSignature(`${submit.raw_body} `, submit.signature, [vectors.app_secret])).toBe(false);
    expect(verifyFlowSignature(submit.raw_body, undefined, [vectors.app_secret])).toBe(false);
    expect(verifyFlowSignature(submit.raw_body, submit.signature.slice('sha256='.length), [vectors.app_secret])).toBe(false);
    expect(verifyFlowSignature(submit.raw_body, `${submit.signature}00`, [vectors.app_secret])).toBe(false);
    expect(verifyFlowSignature(submit.raw_body, 'sha1=abc', [vectors.app_secret])).toBe(false);
  });
});

describe('loading the private key', () => {
  const pem = join(dir, 'test-private-key.pem');
  const keyText = readFileSync(pem, 'utf8');

  function configError(fn: () => KeyObject): { variable: string; message: string } {
    try {
      fn();
    } catch (err) {
      const e = err as { variable: string; message: string; code: string };
      expect(e.code).toBe('config');
      expect(e.message).not.toContain(vectors.passphrase);
      expect(e.message).not.toContain(keyText.split('\n')[4]!);
      return e;
    }
    throw new Error('no error');
  }

  it("reads Meta's encrypted PKCS#1 PEM with its passphrase", () => {
    expect(privateKey.asymmetricKeyType).toBe('rsa');
    expect(privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
  });

  it('names the passphrase variable when it is missing or wrong', () => {
    expect(configError(() => loadFlowPrivateKey(pem)).variable).toBe('COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE');
    const wrong = configError(() => loadFlowPrivateKey(pem, 'not-the-passphrase'));
    expect(wrong.variable).toBe('COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE');
    expect(wrong.message).not.toContain('not-the-passphrase');
  });

  it('names the key variable for a missing file or a file that is not a private key', () => {
    expect(configError(() => loadFlowPrivateKey(join(dir, 'no-such.pem'), 'x')).message).toMatch(/^COLLOQUY_FLOW_PRIVATE_KEY: cannot read .*no-such\.pem \(ENOENT\)$/);
    expect(configError(() => loadFlowPrivateKey(join(dir, 'test-public-key.pem'))).variable).toBe('COLLOQUY_FLOW_PRIVATE_KEY');
  });
});
