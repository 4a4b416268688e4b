/** The sandbox's unauthenticated control routes are only mounted where only this machine can reach them. */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import orderBot from '../fixtures/order-bot.js';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function recordingLogger(lines: string[]): Logger {
  const log = (_o: unknown, msg?: string) => {
    if (msg) lines.push(msg);
  };
  return { error: log, warn: log, info: log, debug: log };
}

async function start(env: Record<string, string>, lines: string[] = []): Promise<RunningServer> {
  const config = { ...loadConfig(env), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [orderBot], config, logger: recordingLogger(lines), extensions: [simulatorExtension] });
  return server;
}

const deliverBody = JSON.stringify({ type: 'text', from: '5215512345678', text: 'hi' });
const post = (url: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: deliverBody });

describe('sandbox control routes and HOST', () => {
  it('on a loopback HOST, the control routes and the simulator are mounted', async () => {
    const s = await start({ HOST: '127.0.0.1' });
    expect((await fetch(`${s.url}/sandbox/_sandbox/stats`)).status).toBe(200);
    expect((await fetch(`${s.url}/simulator/api/bots`)).status).not.toBe(404);
  });

  it('on a non-loopback HOST, they are not mounted and the start says why', async () => {
    const lines: string[] = [];
    const s = await start({ HOST: '0.0.0.0' }, lines);
    const local = s.url.replace('0.0.0.0', '127.0.0.1');
    expect((await post(`${local}/sandbox/_sandbox/deliver`)).status).toBe(404);
    expect((await fetch(`${local}/sandbox/_sandbox/stats`)).status).toBe(404);
    expect((await post(`${local}/simulator/api/text`)).status).toBe(404);
    expect((await fetch(`${local}/healthz`)).status).toBe(200);
    expect(lines.join('\n')).toMatch(/COLLOQUY_SANDBOX_PUBLIC=1/);
  });

  it('COLLOQUY_SANDBOX_PUBLIC=1 mounts them on a non-loopback HOST', async () => {
    const s = await start({ HOST: '0.0.0.0', COLLOQUY_SANDBOX_PUBLIC: '1' });
    const local = s.url.replace('0.0.0.0', '127.0.0.1');
    expect((await fetch(`${local}/sandbox/_sandbox/stats`)).status).toBe(200);
  });

  it('COLLOQUY_SANDBOX_PUBLIC is validated like the other variables', () => {
    expect(() => loadConfig({ COLLOQUY_SANDBOX_PUBLIC: 'maybe' })).toThrow(ConfigError);
    expect(() => loadConfig({ COLLOQUY_SANDBOX_PUBLIC: 'maybe' })).toThrow(/COLLOQUY_SANDBOX_PUBLIC/);
    expect(loadConfig({ COLLOQUY_SANDBOX_PUBLIC: 'true' }).sandboxPublic).toBe(true);
    expect(loadConfig({}).sandboxPublic).toBe(false);
  });
});
