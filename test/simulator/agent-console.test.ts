/**
 * The agent console in Chromium beside a customer tab of the web simulator: the customer walks the
 * support bot to its handoff; the agent sees the queue, claims, reads the chat, replies and
 * releases; the customer sees the agent's answer and then the bot again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import support from '../../bots/support.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(import.meta.dirname, '../../.tmp');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];
const USER = '5215577770001';

let server: RunningServer;
let browser: Browser;
const pageErrors: string[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) return;
  const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [support], config, extensions: [simulatorExtension] });
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function open(path: string): Promise<Page> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install -y chromium`);
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  await page.route('**/*', (route) => (route.request().url().startsWith(`${server.url}/`) ? route.continue() : route.abort()));
  await page.goto(`${server.url}${path}`);
  return page;
}

async function type(page: Page, text: string): Promise<void> {
  await page.fill('#text', text);
  await page.press('#text', 'Enter');
}

describe('agent console in Chromium', () => {
  it('queue → claim → reply → release, beside the customer’s tab', { timeout: 90_000 }, async () => {
    const customer = await open(`/simulator?bot=support&user=${USER}`);
    await customer.locator('#presence', { hasText: 'online' }).waitFor();
    const agent = await open('/simulator/agent');
    const csp = (await agent.request.get(`${server.url}/simulator/agent`)).headers()['content-security-policy'];
    expect(csp).toContain("script-src 'self'");
    await agent.locator('#presence', { hasText: 'online' }).waitFor();
    await agent.locator('#queue .empty').waitFor();
    await agent.fill('#agent', 'ana');
    await agent.press('#agent', 'Tab');

    await type(customer, 'hi');
    await customer.locator('.bubble[data-kind=list] .list-open').click();
    await customer.locator('.list-sheet .row-option', { hasText: 'A billing question' }).click();
    await customer.locator('.list-sheet .list-send').click();
    await customer.locator('.reply-button', { hasText: 'No, talk to a person' }).click();
    await customer.locator('.bubble.in', { hasText: 'Please describe' }).waitFor();
    await type(customer, 'I was charged twice.');
    await customer.locator('.bubble.in', { hasText: 'a person will take over' }).waitFor();

    const item = agent.locator('#queue .item.waiting');
    await item.waitFor();
    expect(await item.locator('.user').textContent()).toBe(`+${USER}`);
    expect(await item.locator('.reason').textContent()).toBe('A billing question: I was charged twice.');
    await item.click();
    await agent.locator('#transcript .line.user', { hasText: 'I was charged twice.' }).waitFor();
    expect(await agent.locator('#reply-send').isDisabled()).toBe(true);
    await agent.click('#claim');
    await agent.locator('#queue .item.claimed .badge', { hasText: 'claimed by ana' }).waitFor();
    await agent.locator('#reply-send:not([disabled])').waitFor();

    await agent.fill('#reply-text', 'Hi, Ana here. Let me look at your bill.');
    await agent.press('#reply-text', 'Enter');
    await customer.locator('.bubble.in', { hasText: 'Hi, Ana here. Let me look at your bill.' }).waitFor();
    await agent.locator('#transcript .line.agent-me', { hasText: 'Hi, Ana here' }).waitFor();

    await type(customer, 'Thanks, I will wait.');
    await agent.locator('#transcript .line.user', { hasText: 'Thanks, I will wait.' }).waitFor();
    await agent.screenshot({ path: join(SHOTS, 'agent-console.png'), animations: 'disabled' });

    await agent.fill('#release-note', 'refunded');
    await agent.click('#release');
    await agent.locator('#queue .empty').waitFor();
    await customer.locator('.bubble.in', { hasText: 'anything else we can help with' }).waitFor();
    await customer.locator('.reply-button', { hasText: 'No, thank you' }).click();
    await customer.locator('.bubble.in', { hasText: 'Great! Write any time' }).waitFor();

    // The bot said nothing while the agent had the conversation: the customer's two messages got no re-prompt.
    const conv = (await server.store.conversations({ botId: 'support', user: USER })).at(-1)!;
    const out = (await server.store.transcript(conv.id)).filter((e) => e.direction === 'out').map((e) => (e.direction === 'out' ? (e.record.agent ?? 'bot') : ''));
    expect(out).toEqual(['bot', 'bot', 'bot', 'bot', 'ana', 'bot', 'bot']);
    expect(pageErrors).toEqual([]);
  });
});
