/** Which provider carries each bot's messages, from the configuration (src/providers.ts). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { buildProviders } from '../src/providers.js';
import { isProvider } from '../src/transport/index.js';
import { tempDir } from './support/temp.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

const seed = { COLLOQUY_BASE_URL: 'http://127.0.0.1:9', COLLOQUY_AUTH_URL: 'http://127.0.0.1:9', COLLOQUY_CLIENT_ID: 'id', COLLOQUY_CLIENT_SECRET: 'sec', COLLOQUY_SENDER: '15550000001' };
const ctx = { sandbox: undefined, sandboxUrl: undefined, logger: silentLogger, onEvent: () => undefined };

function numbersFile(numbers: object[]): string {
  const file = join(tmp.dir, `numbers-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ numbers }));
  return file;
}

describe('buildProviders', () => {
  it('a seed deployment puts a bot whose number is on the Cloud API on the Cloud API, with COLLOQUY_CLOUD_API_TOKEN and its URL', async () => {
    const file = numbersFile([{ phoneNumberId: '700000000000001', displayNumber: '15550000002', bot: 'appointments' }]);
    const config = loadConfig({ ...seed, COLLOQUY_NUMBERS_FILE: file, COLLOQUY_CLOUD_API_TOKEN: 'tok', COLLOQUY_CLOUD_API_URL: 'http://127.0.0.1:9/fake/v23.0' });
    expect(config.provider.kind).toBe('real');
    const p = buildProviders(config, ctx);
    try {
      expect(isProvider(p.adapter) && p.adapter.name).toBe('seed');
      const cloud = p.byBot['appointments']!;
      expect(isProvider(cloud) && cloud.name).toBe('cloud-api');
      expect(isProvider(cloud) && cloud.features.sms).toBe(true);
    } finally {
      await Promise.all(p.all.map((a) => a.close()));
    }
  });

  it('stops the start when a Cloud API number has no token anywhere, naming the variable', () => {
    const file = numbersFile([{ phoneNumberId: '700000000000001', displayNumber: '15550000002', bot: 'appointments' }]);
    const config = loadConfig({ ...seed, COLLOQUY_NUMBERS_FILE: file });
    expect(() => buildProviders(config, ctx)).toThrow(/COLLOQUY_CLOUD_API_TOKEN: is required: number 15550000002 \(bot "appointments"\)/);
  });

  it('a Cloud API deployment without the seed relay has no SMS channel', async () => {
    const p = buildProviders(loadConfig({ COLLOQUY_PROVIDER: 'cloud-api', COLLOQUY_CLOUD_API_TOKEN: 'tok', COLLOQUY_CLOUD_API_PHONE_NUMBER_ID: '1234567' }), ctx);
    try {
      expect(isProvider(p.adapter) && p.adapter.features).toMatchObject({ text: true, templates: true, window: true, readReceipts: true, sms: false });
    } finally {
      await Promise.all(p.all.map((a) => a.close()));
    }
  });
});
