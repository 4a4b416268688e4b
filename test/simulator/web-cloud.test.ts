/**
 * The web simulator on the Cloud API: text as a chat bubble, a template as a card whose quick
 * replies the user taps (a `button` message through the webhook), read ticks from the bot's read
 * receipts, and the 24-hour window. The sandbox's Cloud API mode is the real one: the user's
 * message opens the window, the Cloud API bodies and the read receipt are POSTed to its endpoint
 * as the Cloud API provider would. The server runs the seed provider, so the bot's two texts
 * (SMS rows) are rewritten in the real store into the rows the Cloud API provider leaves, joined
 * to those accepted messages by their ids. Only closing the window is faked (the sandbox's clock
 * is the real one here).
 */
import type { Browser, Page } from 'playwright-core';
import { setup } from 'xstate';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { defineBot, say, text } from '../../src/index.js';
import { SANDBOX_CLOUD_API_TOKEN, SANDBOX_PHONE_NUMBER_ID } from '../../src/sandbox/constants.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import type { BotItem, UserItem, View } from '../../src/simulator/web/index.js';
import { requestsAbout, usersOf } from '../../src/simulator/web/view.js';
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

/** One of the templates the sandbox knows: `Hi {{1}}, we have an update for you. Shall we continue?`, quick replies Continue and Not now. */
const reopen = {
  name: 'colloquy_reopen',
  language: { code: 'en_US' },
  components: [
    { type: 'body', parameters: [{ type: 'text', text: 'Ada' }] },
    { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'confirm' }] },
  ],
};

let server: RunningServer;
let browser: Browser | undefined;
const delivered: Record<string, unknown>[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [cloudy], config, extensions: [simulatorExtension] });
  const sandbox = server.sandbox!;
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

/** POSTs a body to the sandbox's Cloud API endpoint, as the Cloud API provider does; returns the answer. */
async function cloud(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/sandbox/cloud/v23.0/${SANDBOX_PHONE_NUMBER_ID}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${SANDBOX_CLOUD_API_TOKEN}` },
    body: JSON.stringify({ messaging_product: 'whatsapp', ...body }),
  });
  const answer = (await res.json()) as Record<string, unknown>;
  expect(res.status, JSON.stringify(answer)).toBe(200);
  return answer;
}

/** The user writes; the bot's two texts become, in the store and the sandbox, what the Cloud API provider leaves: a text and a template. */
async function cloudConversation(): Promise<{ first: string; second: string }> {
  const first = ((await (await post('text', { bot: 'cloudy', user: USER, text: 'hi' })).json()) as { id: string }).id;
  await server.runtime.idle();
  const second = ((await (await post('text', { bot: 'cloudy', user: USER, text: 'anyone?' })).json()) as { id: string }).id;
  await server.runtime.idle();
  const db = (server.store as SqliteStore).db;
  const rows = db.prepare('SELECT id FROM outbox WHERE user_number = ? ORDER BY id').all(USER) as { id: number }[];
  expect(rows).toHaveLength(2);
  const envelope = { recipient_type: 'individual', to: USER };
  const bodies = [
    { ...envelope, type: 'text', text: { body: 'Hello from the bot' } },
    { ...envelope, type: 'template', template: reopen },
  ];
  const update = db.prepare("UPDATE outbox SET channel = 'interactive', kind = ?, message = ?, request = ?, provider_id = ? WHERE id = ?");
  const messages = [
    { kind: 'text', text: 'Hello from the bot' },
    { kind: 'template', template: reopen },
  ];
  for (const [i, body] of bodies.entries()) {
    const wamid = ((await cloud(body))['messages'] as { id: string }[])[0]!.id;
    update.run(messages[i]!.kind, JSON.stringify(messages[i]), JSON.stringify({ messaging_product: 'whatsapp', ...body }), wamid, rows[i]!.id);
  }
  expect(await cloud({ status: 'read', message_id: first, typing_indicator: { type: 'text' } })).toEqual({ success: true });
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
    expect(v.window).toMatchObject({ open: true, text: expect.stringMatching(/^open: closes in 2[34]h [0-9]+m$/) });
    const bots = v.timeline.filter((i): i is BotItem => i.kind === 'bot');
    expect(bots[0]).toMatchObject({ provider: 'cloud-api', channel: 'interactive', message: { kind: 'text', text: 'Hello from the bot' } });
    expect(bots[1]).toMatchObject({
      provider: 'cloud-api',
      template: {
        name: 'colloquy_reopen',
        language: 'en_US',
        body: ['Ada'],
        seen: { body: 'Hi Ada, we have an update for you. Shall we continue?' },
        replies: [
          { id: 'confirm', title: 'Continue' },
          { id: 'Not now', title: 'Not now' },
        ],
      },
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
    expect(await card.locator('.template-name').textContent()).toBe('Template colloquy_reopen (en_US)');
    expect(await card.locator('.text').textContent()).toBe('Hi Ada, we have an update for you. Shall we continue?');
    expect(await page.locator('.quick-reply').allTextContents()).toEqual(['Continue', 'Not now']);

    const ticks = await page.locator('.bubble.out .ticks').evaluateAll((els) => els.map((e) => [e.className, e.textContent]));
    expect(ticks).toEqual([
      ['ticks read', '\u2713\u2713'],
      ['ticks sent', '\u2713'],
    ]);
    expect(await page.locator('#window-state').textContent()).toMatch(/^24-hour window open: closes in 2[34]h [0-9]+m$/);
    await shot(page, 'simulator-cloud-template');

    await page.locator('.quick-reply', { hasText: 'Continue' }).click();
    // The webhook answers for the tap, and the user's bubble stays (what it says follows the webhook's reading of a `button` message).
    await page.waitForFunction(() => document.querySelectorAll('.bubble.out').length === 3 && !document.querySelector('.bubble.out .ticks.sending'));
    const tap = delivered.at(-1) as { entry: { changes: { value: { messages: Record<string, unknown>[] } }[] }[] };
    expect(tap.entry[0]!.changes[0]!.value.messages[0]).toMatchObject({ from: USER, type: 'button', button: { payload: 'confirm', text: 'Continue' } });

    // The sandbox's clock is the real one here: its window read-out is replaced to see a closed window.
    Object.assign(server.sandbox!, { window: () => ({ open: false, lastUserMessageAt: Date.now() - 25 * HOUR, closesAt: Date.now() - HOUR }) });
    await page.waitForFunction(() => document.getElementById('window-state')?.dataset['open'] === 'false');
    expect(await page.locator('#window-state').textContent()).toBe('24-hour window closed: only templates reach the user');

    // A sandbox that cannot render the template: the card shows the message's own parameters and payloads.
    Object.assign(server.sandbox!, { renderTemplate: () => undefined });
    await page.locator('.template-params li').first().waitFor();
    expect(await page.locator('.template-params li').allTextContents()).toEqual(['Ada']);
    expect(await page.locator('.quick-reply').allTextContents()).toEqual(['confirm']);
    await page.close();
  });
});

describe('the requests panel on the Cloud API', () => {
  it("lists the user's Cloud API messages and the read receipts of their messages, no one else's", () => {
    const bot = { id: 'cloudy', number: '15550000001', smsTag: 'cloudy', flowForms: {} };
    const req = (seq: number, body: Record<string, unknown>) => ({
      seq,
      endpoint: 'cloud-api' as const,
      method: 'POST',
      path: '/cloud/v23.0/1/messages',
      url: '',
      headers: {},
      body,
      status: 200,
      at: 0,
    });
    const requests = [
      req(1, { to: USER, type: 'text' }),
      req(2, { to: '5215500000000', type: 'text' }),
      req(3, { status: 'read', message_id: 'wamid.mine' }),
      req(4, { status: 'read', message_id: 'wamid.theirs' }),
    ];
    expect(requestsAbout(requests, bot, USER, new Set(['wamid.mine'])).map((r) => r.seq)).toEqual([1, 3]);
    expect(usersOf(requests[0]!)).toEqual([USER]);
    expect(usersOf(requests[2]!)).toEqual([]);
  });
});

describe('the seed provider in the same simulator', () => {
  it('shows no window and no read marks', async () => {
    const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const };
    const seed = await startServer({ bots: [cloudy], config, extensions: [simulatorExtension] });
    try {
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
