/**
 * The Flow endpoint's RSA key pair: loading the private half from a PEM file (encrypted under a
 * passphrase, as `colloquy flows keygen` writes it and Meta's sample generates it) and making a new
 * pair. Errors name the variable at fault and never print the key or the passphrase.
 */
import { readFileSync } from 'node:fs';
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { ConfigError } from '../errors.js';

/** The variable naming the private key's PEM file. */
export const FLOW_KEY_VAR = 'COLLOQUY_FLOW_PRIVATE_KEY';
/** The variable holding the private key's passphrase. */
export const FLOW_PASSPHRASE_VAR = 'COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE';
/** The RSA size Meta asks for. */
export const FLOW_KEY_BITS = 2048;

/**
 * Reads the Flow endpoint's private key from the PEM file at `pemPath`, decrypting it with
 * `passphrase` when it is encrypted.
 *
 * @throws {@link ConfigError} naming `COLLOQUY_FLOW_PRIVATE_KEY` (no such file, not a private key,
 * not an RSA key of at least 2048 bits) or `COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE` (missing or wrong).
 */
export function loadFlowPrivateKey(
  pemPath: string,
  passphrase?: string,
  names: { readonly key: string; readonly passphrase: string } = { key: FLOW_KEY_VAR, passphrase: FLOW_PASSPHRASE_VAR },
): KeyObject {
  let pem: string;
  try {
    pem = readFileSync(pemPath, 'utf8');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new ConfigError(names.key, `cannot read the private key file ${pemPath}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  const encrypted = /ENCRYPTED/.test(pem);
  if (encrypted && (passphrase === undefined || passphrase === '')) {
    throw new ConfigError(names.passphrase, `unset, but the private key in ${pemPath} is encrypted`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(encrypted ? { key: pem, format: 'pem', passphrase: passphrase ?? '' } : { key: pem, format: 'pem' });
  } catch {
    if (encrypted) throw new ConfigError(names.passphrase, `does not decrypt the private key in ${pemPath}`);
    throw new ConfigError(names.key, `${pemPath} does not hold a PEM private key`);
  }
  checkRsa(key, pemPath, names.key);
  return key;
}

function checkRsa(key: KeyObject, pemPath: string, name: string): void {
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (key.asymmetricKeyType !== 'rsa' || bits === undefined) {
    throw new ConfigError(name, `${pemPath} holds a ${key.asymmetricKeyType ?? 'non-RSA'} key; the Flow endpoint needs RSA`);
  }
  if (bits < FLOW_KEY_BITS) throw new ConfigError(name, `${pemPath} holds a ${bits}-bit RSA key; Meta asks for ${FLOW_KEY_BITS} bits`);
}

/** A new key pair as PEM text: the private half PKCS#8 encrypted with AES-256-CBC under `passphrase`. */
export interface FlowKeyPairPem {
  readonly privateKey: string;
  readonly publicKey: string;
}

/** Generates a 2048-bit RSA key pair for the Flow endpoint. */
export function generateFlowKeyPair(passphrase: string): FlowKeyPairPem {
  if (passphrase === '') throw new ConfigError(FLOW_PASSPHRASE_VAR, 'an empty passphrase would leave the private key unprotected');
  return generateKeyPairSync('rsa', {
    modulusLength: FLOW_KEY_BITS,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
  });
}

/** The public half of a private key, as the SPKI PEM Meta takes. */
export function flowPublicKeyPem(privateKey: KeyObject): string {
  return createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
}
