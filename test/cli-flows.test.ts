import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import type { Io } from '../src/cli/io.js';
import { main } from '../src/cli/main.js';
import { decryptFlowRequest, encryptFlowResponse } from '../src/flows/crypto.js';
import { loadFlowPrivateKey } from '../src/flows/keys.js';
import { FlowClient } from '../src/simulator/testing.js';
import { tempDir } from './support/temp.js';

const PASSPHRASE = 'a passphrase for this test only';
const temp = tempDir('colloquy-flows-');
afterAll(() => temp.remove());

function capture(env: Record<string, string>, json = false): Io & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return { out: (t) => void (out += t), err: (t) => void (err += t), env, json, stdout: () => out, stderr: () => err };
}

/** A one-request Flow endpoint that decrypts with `key` and answers `{ data: { got: payload } }`. */
async function answerOnce(pemPath: string, passphrase: string, client: (url: string) => Promise<unknown>): Promise<unknown> {
  const key = loadFlowPrivateKey(pemPath, passphrase);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { payload, aesKey, iv } = decryptFlowRequest(JSON.parse(Buffer.concat(chunks).toString('utf8')), key);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(encryptFlowResponse({ data: { got: payload } }, aesKey, iv));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await client(`http://127.0.0.1:${(server.address() as AddressInfo).port}/flows`);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('colloquy flows keygen', () => {
  it('writes an encrypted private key and its public key, which a FlowClient request and the server agree on', async () => {
    const out = temp.path('keys');
    const io = capture({ COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: PASSPHRASE });
    expect(await main(['flows', 'keygen', '--out', out], io)).toBe(0);
    const privatePem = readFileSync(`${out}/flow-private-key.pem`, 'utf8');
    const publicPem = readFileSync(`${out}/flow-public-key.pem`, 'utf8');
    expect(privatePem).toMatch(/^-----BEGIN ENCRYPTED PRIVATE KEY-----\n/);
    expect(publicPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    if (process.platform !== 'win32') expect(statSync(`${out}/flow-private-key.pem`).mode & 0o777).toBe(0o600);
    const key = loadFlowPrivateKey(`${out}/flow-private-key.pem`, PASSPHRASE);
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048);

    const text = io.stdout();
    expect(text).toContain(publicPem);
    expect(text).toContain('/{phone_number_id}/whatsapp_business_encryption');
    expect(text).toContain('business_public_key');
    expect(text).toContain(`COLLOQUY_FLOW_PRIVATE_KEY=${out}/flow-private-key.pem`);
    expect(text).toContain('COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE=');
    expect(text).not.toContain(PASSPHRASE);
    expect(text).not.toContain('PRIVATE KEY-----');
    expect(io.stderr()).toBe('');

    const answer = await answerOnce(`${out}/flow-private-key.pem`, PASSPHRASE, (url) => new FlowClient({ url, publicKey: publicPem }).init('tok', { a: 1 }));
    expect(answer).toMatchObject({ status: 200, body: { data: { got: { action: 'INIT', flow_token: 'tok', data: { a: 1 } } } } });
  });

  it('reads the passphrase from the variable --passphrase-env names, and answers JSON with --json', async () => {
    const out = temp.path('named');
    const io = capture({ MY_FLOW_PASS: 'another passphrase' }, true);
    expect(await main(['flows', 'keygen', '--out', out, '--passphrase-env', 'MY_FLOW_PASS', '--json'], io)).toBe(0);
    const result = JSON.parse(io.stdout()) as { privateKeyFile: string; publicKeyFile: string; passphraseVariable: string; publicKey: string };
    expect(result).toEqual({
      privateKeyFile: `${out}/flow-private-key.pem`,
      publicKeyFile: `${out}/flow-public-key.pem`,
      passphraseVariable: 'MY_FLOW_PASS',
      publicKey: readFileSync(result.publicKeyFile, 'utf8'),
    });
    expect(loadFlowPrivateKey(result.privateKeyFile, 'another passphrase').asymmetricKeyType).toBe('rsa');
    expect(() => loadFlowPrivateKey(result.privateKeyFile, PASSPHRASE)).toThrow(/COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: does not decrypt/);
  });

  it('refuses to run without a passphrase, naming the variable, and writes nothing', async () => {
    const out = temp.path('none');
    const io = capture({});
    expect(await main(['flows', 'keygen', '--out', out], io)).toBe(1);
    expect(io.stderr()).toMatch(/^colloquy flows: COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: unset/);
    const named = capture({ COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: PASSPHRASE });
    expect(await main(['flows', 'keygen', '--out', out, '--passphrase-env', 'EMPTY_ONE'], { ...named, env: { EMPTY_ONE: '' } })).toBe(1);
    expect(named.stderr()).toMatch(/EMPTY_ONE: unset/);
    expect(() => statSync(out)).toThrow();
  });

  it('refuses to overwrite an existing key, leaving it as it was', async () => {
    const out = temp.path('existing');
    const env = { COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: PASSPHRASE };
    expect(await main(['flows', 'keygen', '--out', out], capture(env))).toBe(0);
    const before = readFileSync(`${out}/flow-private-key.pem`, 'utf8');
    const io = capture(env);
    expect(await main(['flows', 'keygen', '--out', out], io)).toBe(1);
    expect(io.stderr()).toMatch(/flow-private-key\.pem and .*flow-public-key\.pem already exist: not overwriting/);
    expect(readFileSync(`${out}/flow-private-key.pem`, 'utf8')).toBe(before);

    const half = temp.path('half');
    expect(await main(['flows', 'keygen', '--out', half], capture(env))).toBe(0);
    writeFileSync(`${half}/flow-private-key.pem`, 'kept');
    rmSync(`${half}/flow-public-key.pem`);
    const again = capture(env);
    expect(await main(['flows', 'keygen', '--out', half], again)).toBe(1);
    expect(again.stderr()).toMatch(/flow-private-key\.pem already exists: not overwriting/);
    expect(readFileSync(`${half}/flow-private-key.pem`, 'utf8')).toBe('kept');
    expect(existsSync(`${half}/flow-public-key.pem`)).toBe(false);
  });

  it('answers a usage error for another subcommand or a bad variable name', async () => {
    const env = { COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: PASSPHRASE };
    const other = capture(env);
    expect(await main(['flows', 'rotate'], other)).toBe(2);
    expect(other.stderr()).toMatch(/unknown flows command "rotate"\nusage: colloquy flows keygen/);
    expect(await main(['flows'], capture(env))).toBe(2);
    const bad = capture(env);
    expect(await main(['flows', 'keygen', '--passphrase-env', 'NOT A NAME', '--out', temp.path('bad')], bad)).toBe(2);
    expect(bad.stderr()).toMatch(/--passphrase-env takes a variable's name/);
  });
});
