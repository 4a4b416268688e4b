/**
 * The Flow endpoint's configuration: keys and secrets from the environment and the numbers file,
 * each mistake stopping the start with the variable or field at fault; per-number endpoints.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { generateFlowKeyPair } from '../../src/flows/keys.js';
import { startServer } from '../../src/server.js';
import { FlowClient } from '../../src/simulator/testing.js';
import orderBot from '../fixtures/order-bot.js';
import { configRefusal } from '../support/config.js';
import { tempDir } from '../support/temp.js';

const dir = join(import.meta.dirname, '../fixtures/flows');
const { passphrase } = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8')) as { passphrase: string };
const KEY = join(dir, 'test-private-key.pem');
const PUBLIC = readFileSync(join(dir, 'test-public-key.pem'), 'utf8');
const tmp = tempDir();
afterAll(() => tmp.remove());

const refusal = configRefusal;

describe('the Flow endpoint configuration', () => {
  it('reads the key and the app secrets: the webhook secret unless set apart, the previous one while rotating', () => {
    const c = loadConfig({ COLLOQUY_FLOW_PRIVATE_KEY: KEY, COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: passphrase, COLLOQUY_WEBHOOK_SECRET: 'hook' });
    expect(c.flows?.key?.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(c.flows?.secrets).toEqual(['hook']);
    expect(loadConfig({ COLLOQUY_WEBHOOK_SECRET: 'hook', COLLOQUY_FLOW_APP_SECRET: 'app', COLLOQUY_FLOW_APP_SECRET_PREVIOUS: 'old' }).flows?.secrets).toEqual(['app', 'old']);
    expect(loadConfig({}).flows).toMatchObject({ key: undefined, secrets: [], budgetMs: 3000 });
  });

  it('stops the start naming the variable at fault, never the passphrase', () => {
    expect(refusal({ COLLOQUY_FLOW_PRIVATE_KEY: join(tmp.dir, 'nope.pem') }).variable).toBe('COLLOQUY_FLOW_PRIVATE_KEY');
    const wrong = refusal({ COLLOQUY_FLOW_PRIVATE_KEY: KEY, COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: 'not-it-1234' });
    expect(wrong.variable).toBe('COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE');
    expect(wrong.message).not.toContain('not-it-1234');
    expect(refusal({ COLLOQUY_FLOW_PRIVATE_KEY: KEY }).variable).toBe('COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE');
    expect(refusal({ COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: 'x' }).variable).toBe('COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE');
    expect(refusal({ COLLOQUY_FLOW_APP_SECRET_PREVIOUS: 'old' }).variable).toBe('COLLOQUY_FLOW_APP_SECRET_PREVIOUS');
    expect(refusal({ COLLOQUY_FLOW_BUDGET_MS: '20000' }).variable).toBe('COLLOQUY_FLOW_BUDGET_MS');
  });

  it('a number of the numbers file may have its own key, whose errors name its field', () => {
    const file = join(tmp.dir, 'bad-numbers.json');
    writeFileSync(file, JSON.stringify({ numbers: [{ phoneNumberId: '700000000000001', displayNumber: '+1 555 000 0001', bot: 'order', flowPrivateKey: join(tmp.dir, 'missing.pem') }] }));
    expect(refusal({ COLLOQUY_NUMBERS_FILE: file }).variable).toBe('numbers[0].flowPrivateKey');
  });

  it('POST /flows/:phoneNumberId answers with that number’s key and app secret, the default key for the others', async () => {
    const own = generateFlowKeyPair('number-one-passphrase');
    const ownKey = join(tmp.dir, 'own.pem');
    writeFileSync(ownKey, own.privateKey);
    const file = join(tmp.dir, 'numbers.json');
    writeFileSync(
      file,
      JSON.stringify({
        numbers: [
          { phoneNumberId: '700000000000001', displayNumber: '+1 555 000 0001', bot: 'order', appSecret: 'secret-one', flowPrivateKey: ownKey, flowPassphraseEnv: 'ONE_PASS' },
          { phoneNumberId: '700000000000002', displayNumber: '+1 555 000 0002', bot: 'order' },
        ],
      }),
    );
    const env = {
      HOST: '127.0.0.1',
      COLLOQUY_PROVIDER: 'cloud-api',
      COLLOQUY_NUMBERS_FILE: file,
      ONE_PASS: 'number-one-passphrase',
      COLLOQUY_WEBHOOK_SECRET: 'default-secret',
      COLLOQUY_FLOW_PRIVATE_KEY: KEY,
      COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE: passphrase,
    };
    const server = await startServer({ bots: [orderBot], config: { ...loadConfig(env), port: 0, db: ':memory:' } });
    try {
      const one = new FlowClient({ url: `${server.url}/flows/700000000000001`, publicKey: own.publicKey, appSecret: 'secret-one' });
      expect((await one.ping()).body).toEqual({ data: { status: 'active' } });
      expect((await one.ping({ appSecret: 'default-secret' })).status).toBe(432);
      expect((await one.ping({ publicKey: PUBLIC })).status).toBe(421);
      const two = new FlowClient({ url: `${server.url}/flows/700000000000002`, publicKey: PUBLIC, appSecret: 'default-secret' });
      expect((await two.ping()).status).toBe(200);
      const none = new FlowClient({ url: `${server.url}/flows/799999999999999`, publicKey: PUBLIC, appSecret: 'default-secret' });
      expect((await none.ping()).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('with a real provider and no key, /flows says which variable to set (503)', async () => {
    const env = { HOST: '127.0.0.1', COLLOQUY_PROVIDER: 'cloud-api', COLLOQUY_CLOUD_API_TOKEN: 't', COLLOQUY_CLOUD_API_URL: 'http://127.0.0.1:9/v23.0', COLLOQUY_SENDER: '15550000001' };
    const server = await startServer({ bots: [orderBot], config: { ...loadConfig(env), port: 0, db: ':memory:' } });
    try {
      const res = await new FlowClient({ url: `${server.url}/flows`, publicKey: PUBLIC }).ping();
      expect(res.status).toBe(503);
      expect(JSON.stringify(res.body)).toContain('COLLOQUY_FLOW_PRIVATE_KEY');
    } finally {
      await server.close();
    }
  });
});
