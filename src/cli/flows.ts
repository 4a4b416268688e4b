/**
 * `colloquy flows keygen [--out DIR] [--passphrase-env NAME]`: writes the WhatsApp Flow endpoint's
 * 2048-bit RSA key pair, the private half encrypted (PKCS#8, AES-256-CBC) under the passphrase in
 * the named variable, and says how to upload the public half and what to set. Never overwrites a
 * key, never prints the private key or the passphrase.
 */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ColloquyError, ConfigError } from '../errors.js';
import { FLOW_KEY_VAR, FLOW_PASSPHRASE_VAR, generateFlowKeyPair } from '../flows/keys.js';
import type { Io } from './io.js';

const USAGE = 'usage: colloquy flows keygen [--out DIR] [--passphrase-env NAME]';
/** The files keygen writes, in the output folder. */
export const FLOW_KEY_FILES = { privateKey: 'flow-private-key.pem', publicKey: 'flow-public-key.pem' } as const;

/** What `flows` takes besides its subcommand. */
export interface FlowsOptions {
  readonly out?: string | undefined;
  readonly passphraseEnv?: string | undefined;
}

/** Runs `colloquy flows <subcommand>`; resolves to the exit code. */
export async function flowsCommand(args: readonly string[], options: FlowsOptions, io: Io): Promise<number> {
  const [sub, ...extra] = args;
  if (sub !== 'keygen' || extra.length > 0) throw new ColloquyError('usage', sub === undefined || sub === 'keygen' ? USAGE : `unknown flows command "${sub}"\n${USAGE}`);
  return keygen(options, io);
}

function keygen(options: FlowsOptions, io: Io): number {
  const variable = options.passphraseEnv ?? FLOW_PASSPHRASE_VAR;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) throw new ColloquyError('usage', `--passphrase-env takes a variable's name, not "${variable.slice(0, 40)}"\n${USAGE}`);
  const passphrase = io.env[variable];
  if (passphrase === undefined || passphrase === '') {
    throw new ConfigError(variable, 'unset: put the passphrase that will encrypt the private key in it (the server reads it back from COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE)');
  }
  const dir = resolve(options.out ?? '.');
  const privatePath = join(dir, FLOW_KEY_FILES.privateKey);
  const publicPath = join(dir, FLOW_KEY_FILES.publicKey);
  const existing = [privatePath, publicPath].filter((p) => existsSync(p));
  if (existing.length > 0)
    throw new ColloquyError('flow_key_exists', `${existing.join(' and ')} already exist${existing.length === 1 ? 's' : ''}: not overwriting a key (move it away first, or choose another --out)`);
  const pair = generateFlowKeyPair(passphrase);
  mkdirSync(dir, { recursive: true });
  // 'wx': a file that appeared since the check above is still not overwritten.
  writeFileSync(privatePath, pair.privateKey, { flag: 'wx', mode: 0o600 });
  writeFileSync(publicPath, pair.publicKey, { flag: 'wx' });
  if (io.json) io.out(`${JSON.stringify({ privateKeyFile: privatePath, publicKeyFile: publicPath, passphraseVariable: variable, publicKey: pair.publicKey })}\n`);
  else io.out(instructions(privatePath, publicPath, variable, pair.publicKey));
  return 0;
}

function instructions(privatePath: string, publicPath: string, variable: string, publicKey: string): string {
  const same = variable === FLOW_PASSPHRASE_VAR ? '(already set)' : `(the value of ${variable})`;
  return `Wrote a 2048-bit RSA key pair for the WhatsApp Flow endpoint:
  private key (encrypted with AES-256-CBC under ${variable}): ${privatePath}
  public key: ${publicPath}

Upload the public key for each phone number that sends the flows (Graph API, a token with
whatsapp_business_messaging; form field business_public_key):
  curl -X POST "https://graph.facebook.com/v23.0/{phone_number_id}/whatsapp_business_encryption" \\
    -H "Authorization: Bearer {access token}" \\
    --form-string "business_public_key=$(cat ${publicPath})"

Then set, where the server runs:
  ${FLOW_KEY_VAR}=${privatePath}
  ${FLOW_PASSPHRASE_VAR}=<the passphrase> ${same}
Keep the private key and its passphrase out of version control.

The public key:
${publicKey}`;
}
