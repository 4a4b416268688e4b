/** Runs the real `colloquy` command as a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { signBody, webhookPayload } from '../../src/sandbox/index.js';
import { eventually } from '../support/eventually.js';

export const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'colloquy.js');

/** Runs a command to completion. */
export function run(args: string[], env: Record<string, string> = {}, input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--conditions=colloquy-source', BIN, ...args], { cwd: ROOT, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => {
      stdout += d;
    });
    p.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(input ?? '');
  });
}

/** Starts `colloquy serve` and waits for its banner. */
export async function serve(
  args: string[],
  env: Record<string, string>,
): Promise<{ proc: ChildProcess; url: string; stdout: () => string; stderr: () => string; stop: (signal?: NodeJS.Signals) => Promise<number | null> }> {
  const proc = spawn(process.execPath, ['--conditions=colloquy-source', BIN, 'serve', ...args], { cwd: ROOT, env: cleanEnv({ PORT: '0', ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => {
    err += d;
  });
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`serve did not start: ${out}\n${err}`)), 20_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /webhook\s+(http:\/\/[^/\s]+)\/webhook/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`serve exited with ${code}: ${out}\n${err}`));
    });
  });
  return {
    proc,
    url,
    stdout: () => out,
    stderr: () => err,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        proc.once('exit', (code) => resolve(code));
        proc.kill(signal);
      }),
  };
}

/** The test's environment without Colloquy's variables (the caller sets what it wants). */
function cleanEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('COLLOQUY_') && k !== 'PORT'));
  return { ...base, COLLOQUY_LOG_LEVEL: 'info', ...env };
}

/** POSTs one signed webhook carrying `message`, sent to `displayPhoneNumber`. */
export async function postWebhook(url: string, message: object, secret: string, displayPhoneNumber: string): Promise<Response> {
  const body = JSON.stringify(webhookPayload({ messages: [message as never], displayPhoneNumber }));
  return fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(secret, body) }, body });
}

/** A message the sandbox provider received. */
export type Sent = { channel: string; request: Record<string, unknown> };

/** The sandbox's messages to `user`, once there are at least `n` (replies go out after the webhook's answer). */
export function sandboxMessages(url: string, user: string, n: number, timeoutMs: number): Promise<Sent[]> {
  return eventually(
    async () => {
      const got = (await (await fetch(`${url}/sandbox/_sandbox/messages?to=${user}`)).json()) as Sent[];
      expect(got.length, JSON.stringify(got)).toBeGreaterThanOrEqual(n);
      return got;
    },
    { what: `${n} messages to ${user}`, timeoutMs, intervalMs: 25 },
  );
}
