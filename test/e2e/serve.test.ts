/** `colloquy serve` as a user runs it: a real process, real HTTP, signed webhooks, a SQLite file. */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { InteractiveRequestSchema, SmsRequestSchema } from '../../src/messages/index.js';
import { buttonReplyMessage, flowReplyMessage, listReplyMessage, signBody, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';
import { postWebhook, ROOT, run, sandboxMessages, serve } from './cli.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

const SECRET = 'e2e-webhook-secret';
const PIZZA = '15550000001';
const USER = '5215598765432';

const post = (url: string, message: object, secret = SECRET) => postWebhook(url, message, secret, PIZZA);

/** The sandbox's messages to the user, once there are at least `n`. */
const messagesToUser = (url: string, n: number) => sandboxMessages(url, USER, n, 10_000);

const started: { stop: (s?: NodeJS.Signals) => Promise<number | null>; proc: { exitCode: number | null } }[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) if (s.proc.exitCode === null) await s.stop('SIGKILL');
});
async function serveTracked(args: string[], env: Record<string, string>) {
  const s = await serve(args, env);
  started.push(s);
  return s;
}

describe('colloquy serve', () => {
  it('a user taps through the pizza bot; a restart mid-conversation changes nothing they see', async () => {
    const env = { COLLOQUY_DB: join(tmp.dir, 'serve.db'), COLLOQUY_WEBHOOK_SECRET: SECRET };
    let s = await serveTracked(['bots'], env);
    expect((await post(s.url, textMessage({ from: USER, text: 'hi' }))).status).toBe(200);
    let got = await messagesToUser(s.url, 1);
    expect(got[0]!.request).toMatchObject({ from: PIZZA, to: USER, type: 'contacts' });
    expect((await post(s.url, listReplyMessage({ from: USER, rowId: 'margherita', title: 'Margherita' }))).status).toBe(200);
    got = await messagesToUser(s.url, 2);
    expect((got[1]!.request['replyButtons'] as Record<string, unknown>)['headerImage']).toEqual({ link: 'https://images.example.com/pizza/margherita.jpg' });

    // Restart: SIGTERM is a graceful stop; the next process continues from the same file.
    expect(await s.stop('SIGTERM')).toBe(0);
    expect(s.stderr()).toContain('shutting down');
    s = await serveTracked(['bots'], env);
    expect((await post(s.url, buttonReplyMessage({ from: USER, buttonId: 'large', title: 'Large $15.20' }))).status).toBe(200);
    got = await messagesToUser(s.url, 1);
    const flowReq = got[0]!.request as { flow: { action: { parameters: { flow_token: string; flow_action_payload: unknown } } } };
    expect(flowReq.flow.action.parameters.flow_action_payload).toEqual({
      screen: 'DELIVERY_ADDRESS',
      data: { product_name: 'Margherita', product_description: 'large - Tomato, mozzarella, basil', product_price: 15.2 },
    });
    const token = flowReq.flow.action.parameters.flow_token;
    expect((await post(s.url, flowReplyMessage({ from: USER, flowToken: token, data: { street: 'Calle 5 de Mayo 12', city: 'Puebla' } }))).status).toBe(200);
    got = await messagesToUser(s.url, 2);
    const receipt = got[1]!.request as { replyButtons: { headerDocument: { fileName: string }; body: string } };
    expect(receipt.replyButtons.headerDocument.fileName).toMatch(/^receipt-P\d+\.pdf$/);
    expect(receipt.replyButtons.body).toContain('to Calle 5 de Mayo 12, Puebla');
    expect((await post(s.url, buttonReplyMessage({ from: USER, buttonId: 'done', title: "That's all" }))).status).toBe(200);
    got = await messagesToUser(s.url, 3);
    expect(got[2]).toMatchObject({ channel: 'sms', request: { msisdns: [USER], message: 'Enjoy your meal! Write any time to order again.', tag: 'pizza' } });
    for (const m of got) expect((m.channel === 'sms' ? SmsRequestSchema : InteractiveRequestSchema).safeParse(m.request).success).toBe(true);

    const health = await (await fetch(`${s.url}/healthz`)).json();
    expect(health).toMatchObject({ ok: true, provider: 'sandbox', bots: expect.arrayContaining(['appointments', 'pizza', 'support']) });
    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    expect(metrics).toMatch(/colloquy_turns_total\{bot="pizza",outcome="ok"\} 3/);
    expect(metrics).toMatch(/colloquy_token_requests_total\{outcome="ok"\} 1/);
    expect(metrics).toMatch(/colloquy_webhook_seconds_bucket/);
    expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(await s.stop()).toBe(0);
    expect(s.stderr()).not.toContain(SECRET);
  });

  it('refuses an unsigned webhook when a secret is set, storing nothing', async () => {
    const s = await serveTracked(['bots'], { COLLOQUY_DB: join(tmp.dir, 'unsigned.db'), COLLOQUY_WEBHOOK_SECRET: SECRET });
    const res = await post(s.url, textMessage({ from: USER, text: 'hi' }), 'another-secret');
    expect(res.status).toBe(401);
    expect(await s.stop()).toBe(0);
    const inbox = await run(['migrate', '--json'], { COLLOQUY_DB: join(tmp.dir, 'unsigned.db') });
    expect(inbox.code).toBe(0);
  });

  it.each([
    ['PORT', 'eighty', 'PORT: must be a whole number'],
    ['COLLOQUY_BASE_URL', 'not a url', 'COLLOQUY_BASE_URL: must be an absolute http(s) URL'],
    ['COLLOQUY_SENDER', '+52 55 1234', 'COLLOQUY_SENDER: must be digits only'],
    ['COLLOQUY_SMS_COUNTRY', 'Mexico', 'COLLOQUY_SMS_COUNTRY: must be a two-letter'],
  ])('a bad %s stops the start with its name, and no stack trace', async (name, value, message) => {
    const r = await run(['serve', 'bots'], { [name]: value });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('a port already in use is said plainly, with what to do', async () => {
    const s = await serveTracked(['bots'], { COLLOQUY_DB: join(tmp.dir, 'busy-1.db') });
    const port = new URL(s.url).port;
    const r = await run(['serve', 'bots'], { PORT: port, COLLOQUY_DB: join(tmp.dir, 'busy-2.db') });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`colloquy serve: 127.0.0.1:${port} is already in use (another server is running there): stop it, or set PORT to another port`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('COLLOQUY_LOG_LEVEL=warn serves without printing the banner', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => resolve(p));
      });
    });
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('COLLOQUY_') && k !== 'PORT'));
    const proc = spawn(process.execPath, ['--conditions=colloquy-source', join(ROOT, 'bin', 'colloquy.js'), 'serve', 'bots'], {
      cwd: ROOT,
      env: { ...env, PORT: String(port), COLLOQUY_DB: join(tmp.dir, 'quiet.db'), COLLOQUY_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    const exited = new Promise<number | null>((resolve) => proc.once('exit', resolve));
    try {
      await eventually(async () => expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200), { what: '/healthz answering 200', timeoutMs: 30_000, intervalMs: 50 });
    } finally {
      proc.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toBe('');
  });

  it('a real provider needs its credentials: the missing one is named', async () => {
    const r = await run(['serve', 'bots'], { COLLOQUY_BASE_URL: 'https://provider.example.com', COLLOQUY_AUTH_URL: 'https://auth.example.com' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('COLLOQUY_CLIENT_ID: is required when COLLOQUY_BASE_URL is set');
  });

  it('a bot file that exports no bot is named', async () => {
    const { writeFileSync } = await import('node:fs');
    const file = join(tmp.dir, 'not-a-bot.ts');
    writeFileSync(join(tmp.dir, 'package.json'), '{"type":"module"}\n'); // as in a bot project
    writeFileSync(file, 'export const answer = 42;\n');
    const r = await run(['serve', file], {});
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`colloquy serve: bots: ${file} exports no bot (export default defineBot({...}))`);
  });
});
