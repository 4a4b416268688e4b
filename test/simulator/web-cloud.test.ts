/**
 * The web simulator on the Cloud API: text as a chat bubble, a template as a card whose quick
 * replies the user taps (a `button` message through the webhook), read ticks from the bot's read
 * receipts, and the 24-hour window. The sandbox's Cloud API mode is faked at its edge (its
 * `window(user)` and `reads(user)` read-outs and one accepted Cloud API record), and the bot's two
 * texts are rewritten in the real store into the rows the Cloud API provider leaves (a text and a
 * template): everything else (server, webhook, store, page) is the real thing.
 */
import type { Browser, Page } from 'playwright-core';
import { setup } from 'xstate';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { defineBot, say, text } from '../../src/index.js';
import type { AcceptedCloud, AcceptedRead, SandboxMessage } from '../../src/sandbox/types.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { WindowState } from '../../src/simulator/cloud-sandbox.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import type { BotItem, UserItem, View } from '../../src/simulator/web/index.js';
import type { SqliteStore } from '../../src/store/sqlite/store.js';
import { launchChromium, onlyLoopback, requireChromium, shot } from './browser.js';

const USER = '5215544440001';
const HOUR = 3_600_000;

const cloudy = defineBot({
  id: 'cloudy',
  machine: setup({}).createMachine({
    id: 'cloudy',
    initial: 'hello',
    states: { hello: { entry: [say(text('Hello from the bot')), say(text('(becomes a template)'))], on: { 'reply.confirm': 'confirmed' } }, confirmed: {} },
  }),
  options: { onUnhandled: 'ignore' },
});

const reminder = {
  name: 'booking_reminder',
  language: { code: 'en_US' },
  components: [
    { type: 'header', parameters: [{ type: 'text', text: 'Your booking' }] },
    {
      type: 'body',
      parameters: [
        { type: 'text', text: 'Tuesday 10:00' },
        { type: 'text', text: 'Table 4' },
      ],
    },
    { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'confirm' }] },
    { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'cancel' }] },
  ],
};

let server: RunningServer;
let browser: Browser | undefined;
const fake = { window: { open: false } as WindowState, reads: [] as AcceptedRead[] };
const delivered: Record<string, unknown>[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [cloudy], config, extensions: [simulatorExtension] });
  const sandbox = server.sandbox!;
  Object.assign(sandbox, { window: (user: string) => (user === USER ? fake.window : { open: false }), reads: (user?: string) => fake.reads.filter((r) => user === undefined || r.user === user) });
  const payload = sandbox.deliver.payload.bind(sandbox.deliver);
  sandbox.deliver.payload = (body, ...rest) => {
    delivered.push(body as Record<string, unknown>);
    return payload(body, ...rest);
  };
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}/simulator/api/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

async function view(): Promise<View> {
  return (await (await fetch(`${server.url}/simulator/api/state?bot=cloudy&user=${USER}`)).json()) as View;
}

/** The user writes; the bot's two texts become, in the store, what the Cloud API provider leaves: a text and a template. */
async function cloudConversation(): Promise<{ first: string; second: string }> {
  const first = ((await (await post('text', { bot: 'cloudy', user: USER, text: 'hi' })).json()) as { id: string }).id;
  await server.runtime.idle();
  const second = ((await (await post('text', { bot: 'cloudy', user: USER, text: 'anyone?' })).json()) as { id: string }).id;
  await server.runtime.idle();
  const db = (server.store as SqliteStore).db;
  const rows = db.prepare('SELECT id FROM outbox WHERE user_number = ? ORDER BY id').all(USER) as { id: number }[];
  expect(rows).toHaveLength(2);
  const update = db.prepare("UPDATE outbox SET channel = 'interactive', kind = ?, message = ?, request = ? WHERE id = ?");
  const envelope = { messaging_product: 'whatsapp', recipient_type: 'individual', to: USER };
  update.run('text', JSON.stringify({ kind: 'text', text: 'Hello from the bot' }), JSON.stringify({ ...envelope, type: 'text', text: { body: 'Hello from the bot' } }), rows[0]!.id);
  update.run('template', JSON.stringify({ kind: 'template', template: reminder }), JSON.stringify({ ...envelope, type: 'template', template: reminder }), rows[1]!.id);
  const record: AcceptedCloud = {
    seq: 9_001,
    channel: 'cloud-api',
    numberId: '1098765',
    from: '15550000001',
    to: USER,
    type: 'text',
    request: { ...envelope, type: 'text', text: { body: 'Hello from the bot' } },
    providerId: 'wamid.cloud1',
    at: Date.now(),
  };
  (server.sandbox!.messages as SandboxMessage[]).push(record);
  fake.reads.push({ seq: 1, numberId: '1098765', messageId: first, user: USER, typing: true, at: Date.now() });
  fake.window = { open: true, lastUserMessageAt: Date.now(), closesAt: Date.now() + 24 * HOUR - 30_000 };
  return { first, second };
}

describe('web simulator on the Cloud API', () => {
  let ids: { first: string; second: string };
  beforeAll(async () => {
    ids = await cloudConversation();
  });

  it('shows text as text, a template as a card, read marks and the window in the view', async () => {
    const v = await view();
    expect(v.provider).toBe('cloud-api');
    expect(v.window).toMatchObject({ open: true, text: 'open: closes in 24h 0m' });
    const bots = v.timeline.filter((i): i is BotItem => i.kind === 'bot');
    expect(bots[0]).toMatchObject({ provider: 'cloud-api', channel: 'interactive', message: { kind: 'text', text: 'Hello from the bot' } });
    expect(bots[1]).toMatchObject({
      provider: 'cloud-api',
      template: { name: 'booking_reminder', language: 'en_US', header: ['Your booking'], body: ['Tuesday 10:00', 'Table 4'], replies: [{ id: 'confirm' }, { id: 'cancel' }] },
    });
    const users = v.timeline.filter((i): i is UserItem => i.kind === 'user');
    expect(users.map((u) => [u.id, u.read])).toEqual([
      [ids.first, true],
      [ids.second, false],
    ]);
  });

  it('renders them in Chromium, taps a quick reply as a `button` message, and follows the window as it closes', { timeout: 60_000 }, async () => {
    requireChromium();
    const page: Page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await onlyLoopback(page, server.url);
    await page.goto(`${server.url}/simulator?bot=cloudy&user=${USER}`);
    await page.locator('.bubble.in[data-kind="template"]').waitFor();

    const textBubble = page.locator('.bubble.in[data-kind="text"]');
    expect(await textBubble.locator('.text').textContent()).toBe('Hello from the bot');
    expect(await textBubble.evaluate((e) => e.classList.contains('sms'))).toBe(false);
    const card = page.locator('.bubble.in[data-kind="template"]');
    expect(await card.locator('.template-name').textContent()).toBe('Template booking_reminder (en_US)');
    expect(await card.locator('.template-header').allTextContents()).toEqual(['Your booking']);
    expect(await card.locator('.template-params li').allTextContents()).toEqual(['Tuesday 10:00', 'Table 4']);
    expect(await page.locator('.quick-reply').allTextContents()).toEqual(['confirm', 'cancel']);

    const ticks = await page.locator('.bubble.out .ticks').evaluateAll((els) => els.map((e) => [e.className, e.textContent]));
    expect(ticks).toEqual([
      ['ticks read', '\u2713\u2713'],
      ['ticks sent', '\u2713'],
    ]);
    expect(await page.locator('#window-state').textContent()).toBe('24-hour window open: closes in 24h 0m');
    await shot(page, 'simulator-cloud-template');

    await page.locator('.quick-reply', { hasText: 'confirm' }).click();
    // The webhook answers for the tap, and the user's bubble stays (what it says follows the webhook's reading of a `button` message).
    await page.waitForFunction(() => document.querySelectorAll('.bubble.out').length === 3 && !document.querySelector('.bubble.out .ticks.sending'));
    const tap = delivered.at(-1) as { entry: { changes: { value: { messages: Record<string, unknown>[] } }[] }[] };
    expect(tap.entry[0]!.changes[0]!.value.messages[0]).toMatchObject({ from: USER, type: 'button', button: { payload: 'confirm', text: 'confirm' } });

    fake.window = { open: false, lastUserMessageAt: Date.now() - 25 * HOUR, closesAt: Date.now() - HOUR };
    await page.waitForFunction(() => document.getElementById('window-state')?.dataset['open'] === 'false');
    expect(await page.locator('#window-state').textContent()).toBe('24-hour window closed: only templates reach the user');
    await page.close();
  });
});

describe('the seed provider in the same simulator', () => {
  it('shows no window and no read marks', async () => {
    const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const };
    const seed = await startServer({ bots: [cloudy], config, extensions: [simulatorExtension] });
    try {
      Object.assign(seed.sandbox!, { window: () => ({ open: false }), reads: () => [] });
      await fetch(`${seed.url}/simulator/api/text`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ bot: 'cloudy', user: USER, text: 'hi' }) });
      await seed.runtime.idle();
      const v = (await (await fetch(`${seed.url}/simulator/api/state?bot=cloudy&user=${USER}`)).json()) as View;
      expect(v.provider).toBe('seed');
      expect(v.window).toBeNull();
      const user = v.timeline.find((i) => i.kind === 'user');
      expect(user).toBeDefined();
      expect(user).not.toHaveProperty('read');
      expect(v.timeline.filter((i) => i.kind === 'bot').map((b) => (b as BotItem).provider)).toEqual(['seed', 'seed']);
    } finally {
      await seed.close();
    }
  });
});
