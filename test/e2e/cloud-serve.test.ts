/**
 * `colloquy serve` on the Cloud API as a user runs it: a real process, signed webhooks over real
 * HTTP, the sandbox playing the Cloud API (`COLLOQUY_PROVIDER=cloud-api` without a token), a
 * numbers file routing two numbers to two bots.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { signBody, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/temp.js';
import { run, serve } from './cli.js';

const tmp = tempDir();
afterAll(() => tmp.remove());

const SECRET = 'e2e-cloud-secret';
const started: { stop: (s?: NodeJS.Signals) => Promise<number | null>; proc: { exitCode: number | null } }[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) if (s.proc.exitCode === null) await s.stop('SIGKILL');
});

type Cloud = { channel: string; numberId: string; type: string; to: string; request: Record<string, unknown> };

async function post(url: string, message: object, number: { display: string; id: string }): Promise<Response> {
  const body = JSON.stringify(webhookPayload({ messages: [message as never], displayPhoneNumber: number.display, phoneNumberId: number.id }));
  return fetch(`${url}/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signBody(SECRET, body) }, body });
}

const json = async <T>(url: string): Promise<T> => (await (await fetch(url)).json()) as T;

/** The sandbox's Cloud API messages to `user`, once there are at least `n`. */
const cloudTo = (url: string, user: string, n: number) =>
  eventually(
    async () => {
      const got = (await json<Cloud[]>(`${url}/sandbox/_sandbox/messages?to=${user}`)).filter((m) => m.channel === 'cloud-api');
      expect(got.length).toBeGreaterThanOrEqual(n);
      return got;
    },
    { what: `${n} Cloud API messages to ${user}`, timeoutMs: 10_000, intervalMs: 25 },
  );

/** The read receipts the bot sent for `user`'s messages, once there are at least `n`. */
const readsOf = (url: string, user: string, n: number) =>
  eventually(
    async () => {
      const got = await json<{ messageId: string; typing: boolean; numberId: string }[]>(`${url}/sandbox/_sandbox/reads?user=${user}`);
      expect(got.length).toBeGreaterThanOrEqual(n);
      return got;
    },
    { what: `${n} read receipts for ${user}`, timeoutMs: 10_000, intervalMs: 25 },
  );

describe('colloquy serve on the Cloud API (the sandbox playing it)', () => {
  it('answers on the number each bot was written to, and marks each message read once, also when redelivered', async () => {
    const s = await serve(['bots'], { COLLOQUY_PROVIDER: 'cloud-api', COLLOQUY_DB: join(tmp.dir, 'cloud.db'), COLLOQUY_WEBHOOK_SECRET: SECRET });
    started.push(s);
    expect(s.stdout()).toContain('playing the Cloud API');
    const user = '5215500001111';
    const hi = textMessage({ from: user, text: 'hi', id: 'wamid.cloud-e2e-1' });
    expect((await post(s.url, hi, { display: '15550000001', id: '100000000000001' })).status).toBe(200);
    const [list] = await cloudTo(s.url, user, 1);
    expect(list).toMatchObject({ numberId: '100000000000001', type: 'interactive:list' });
    expect(list!.request).toMatchObject({ messaging_product: 'whatsapp', to: user, type: 'interactive', interactive: { type: 'list' } });
    // The same message again (a redelivery), then a new one: exactly one receipt each.
    expect(await (await post(s.url, hi, { display: '15550000001', id: '100000000000001' })).json()).toMatchObject({ duplicates: 1 });
    await post(s.url, textMessage({ from: user, text: 'hello again', id: 'wamid.cloud-e2e-2' }), { display: '15550000001', id: '100000000000001' });
    const reads = await readsOf(s.url, user, 2);
    expect(reads.map((r) => [r.messageId, r.typing])).toEqual([
      ['wamid.cloud-e2e-1', true],
      ['wamid.cloud-e2e-2', true],
    ]);
    // The appointments bot answers from its own number.
    const other = '5215500002222';
    await post(s.url, textMessage({ from: other, text: 'hi' }), { display: '15550000002', id: '100000000000002' });
    expect((await cloudTo(s.url, other, 1))[0]).toMatchObject({ numberId: '100000000000002' });
  });

  it('a numbers file routes by phone_number_id, each bot answering from its number', async () => {
    const file = join(tmp.dir, 'numbers.json');
    writeFileSync(
      file,
      JSON.stringify({
        numbers: [
          { phoneNumberId: '700000000000001', displayNumber: '+1 555 000 0001', bot: 'pizza' },
          { phoneNumberId: '700000000000003', displayNumber: '+1 555 000 0003', bot: 'support' },
        ],
      }),
    );
    const s = await serve(['bots/pizza.ts', 'bots/support.ts'], {
      COLLOQUY_PROVIDER: 'cloud-api',
      COLLOQUY_NUMBERS_FILE: file,
      COLLOQUY_DB: join(tmp.dir, 'numbers.db'),
      COLLOQUY_WEBHOOK_SECRET: SECRET,
    });
    started.push(s);
    const a = '5215500003333';
    const b = '5215500004444';
    await post(s.url, textMessage({ from: a, text: 'hi' }), { display: '15550000001', id: '700000000000001' });
    await post(s.url, textMessage({ from: b, text: 'hi' }), { display: 'ignored by id', id: '700000000000003' });
    expect((await cloudTo(s.url, a, 1))[0]).toMatchObject({ numberId: '700000000000001' });
    const toB = (await cloudTo(s.url, b, 1))[0]!;
    expect(toB.numberId).toBe('700000000000003');
    expect(JSON.stringify(toB.request)).toMatch(/help|support|topic/i);
  });

  it('a numbers file naming a bot that is not served stops the start with its field, and the process exits', async () => {
    const file = join(tmp.dir, 'numbers-bad.json');
    writeFileSync(file, JSON.stringify({ numbers: [{ phoneNumberId: '700000000000009', displayNumber: '15550000009', bot: 'nobody' }] }));
    const r = await run(['serve', 'bots/pizza.ts'], { COLLOQUY_PROVIDER: 'cloud-api', COLLOQUY_NUMBERS_FILE: file, COLLOQUY_DB: ':memory:', PORT: '0' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('numbers[0].bot: no served bot is "nobody" (served: pizza)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
