/**
 * The agents' inbox in Chromium, on a laptop screen and a phone: an agent signs in with the token
 * `colloquy agents add` gave, sees the live queue, what the user was offered and tapped, and the
 * time left before the handoff times out; claims, replies (a double click sends once), adds an
 * internal note the user never gets, releases with a note, and signs out. The user is the support
 * bot's, on the sandbox provider.
 */
import { writeFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgentToken, secretHash } from '../../src/agent/auth.js';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { launchChromium, onlyLoopback, requireChromium, shot } from '../simulator/browser.js';
import { tempDir } from '../support/temp.js';
import support from '../../bots/support.js';

const LAPTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let server: RunningServer;
let browser: Browser | undefined;
let token: string;
let cleanup: (() => void) | undefined;
const pageErrors: string[] = [];

beforeAll(async () => {
  const replies = tempDir('colloquy-inbox-replies-');
  cleanup = () => replies.remove();
  writeFileSync(
    replies.path('replies.json'),
    JSON.stringify({ queues: { billing: [{ title: 'Refund on its way', text: 'Your refund is on its way: 3 to 5 working days.' }], '*': [{ title: 'Greeting', text: 'Hello! How can I help?' }] } }),
  );
  // A service token is set: nothing is open on loopback, the page works through its session alone.
  const env = { COLLOQUY_AGENT_TOKEN: 'service-token-0123456789', COLLOQUY_AGENT_REPLIES_FILE: replies.path('replies.json') };
  const config = { ...loadConfig(env), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [support], config });
  token = newAgentToken();
  await server.store.addAgent('ana', secretHash(token), Date.now());
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  cleanup?.();
});

async function say(user: string, event: { type: string; [k: string]: unknown }): Promise<void> {
  await server.runtime.receive({ botId: 'support', user, source: 'whatsapp', event });
  await server.runtime.idle();
}

/** The support bot's walk to a person: the topics list, then "No, talk to a person". */
async function handOff(user: string): Promise<void> {
  await say(user, { type: 'text', text: 'hi' });
  await say(user, { type: 'reply.billing', id: 'billing', title: 'A billing question', via: 'list' });
  await say(user, { type: 'reply.agent', id: 'agent', title: 'No, talk to a person', via: 'button' });
  await say(user, { type: 'text', text: 'I was charged twice.' });
}

/** What the sandbox delivered to `user` with this text (WhatsApp or SMS). */
function delivered(user: string, text: string): number {
  return server.sandbox!.messages.filter((m) => m.to === user && JSON.stringify(m.channel === 'sms' ? m.text : m.request).includes(text)).length;
}

async function open(viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
  requireChromium();
  const context = await browser!.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('401')) pageErrors.push(m.text());
  });
  await onlyLoopback(page, server.url);
  return { context, page };
}

async function signIn(page: Page): Promise<void> {
  const first = await page.goto(`${server.url}/agent`);
  expect(first?.status()).toBe(401);
  await page.fill('#token', token);
  await page.click('#sign-in');
  await page.locator('#presence', { hasText: 'live' }).waitFor();
  expect(page.url()).toBe(`${server.url}/agent`);
}

/** Nothing of the session is in the page's storage or its address. */
async function nothingStored(page: Page): Promise<void> {
  expect(await page.evaluate(() => window.localStorage.length + window.sessionStorage.length)).toBe(0);
  expect(page.url()).not.toContain(token);
  expect(await page.evaluate(() => document.cookie)).toBe(''); // HttpOnly: the script cannot read it
}

describe('the inbox in Chromium', () => {
  it('on a laptop: sign in, queue, offered choices, countdown, claim, one reply, a note, release, sign out', { timeout: 120_000 }, async () => {
    const user = '5215577770101';
    const { context, page } = await open(LAPTOP);
    await signIn(page);
    await nothingStored(page);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'colloquy_agent', httpOnly: true, sameSite: 'Strict', path: '/agent' });
    await page.locator('#queue .empty').waitFor();

    // The handoff arrives while the page is open: the stream brings it, nobody reloads.
    await handOff(user);
    const item = page.locator(`#queue .item[data-conversation]`, { hasText: `+${user}` });
    await item.locator('.badge', { hasText: 'waiting' }).waitFor();
    await expect.poll(() => item.locator('.clock').textContent()).toMatch(/^times out in (9:[0-5]\d|10:00)$/);
    await item.click();

    const offered = page.locator('#offered');
    await offered.locator('.choice.tapped', { hasText: 'No, talk to a person' }).waitFor();
    expect(await offered.locator('.choice').allTextContents()).toEqual(['Yes, solved', 'No, talk to a person ✓ tapped']);
    await expect.poll(() => page.locator('#timeout-left').textContent()).toMatch(/^times out in (9:[0-5]\d|10:00)$/);
    await page.locator('#transcript .line.user', { hasText: 'I was charged twice.' }).waitFor();
    expect(await page.locator('#reply-send').isDisabled()).toBe(true);

    await page.click('#claim');
    await item.locator('.badge', { hasText: 'yours' }).waitFor();
    await page.locator('#reply-send:not([disabled])').waitFor();
    await expect.poll(() => page.locator('#timeout-left').isHidden()).toBe(true);
    // Held, the handoff no longer times out: the claim goes back to the queue if the agent stays idle.
    await expect.poll(() => page.locator('#idle-left').textContent()).toMatch(/^back to the queue if idle in (29:[0-5]\d|30:00)$/);

    const reply = 'Hi, Ana here. I see the double charge.';
    await page.fill('#reply-text', reply);
    await page.dblclick('#reply-send');
    await page.locator('#transcript .line.agent.me', { hasText: reply }).waitFor();
    await server.runtime.idle();
    expect(delivered(user, reply)).toBe(1);
    expect(await page.locator('#transcript .line.agent.me', { hasText: reply }).count()).toBe(1);

    // An internal note: shown to agents, never sent to the user.
    await page.click('[data-tab=note]');
    await page.fill('#note-text', 'Refund approved by billing, ticket 88952.');
    await page.click('#note-add');
    await page.locator('#transcript .line.note', { hasText: 'Refund approved by billing' }).waitFor();
    await server.runtime.idle();
    expect(delivered(user, 'Refund approved')).toBe(0);

    // The user writes to the agent: it appears live.
    await say(user, { type: 'text', text: 'Thanks, I will wait.' });
    await page.locator('#transcript .line.user', { hasText: 'Thanks, I will wait.' }).waitFor();
    await shot(page, 'inbox-laptop');

    await page.click('[data-tab=release]');
    await page.fill('#release-note', 'refunded');
    await page.click('#release');
    await page.locator('#queue .empty').waitFor();
    const conv = (await server.store.conversations({ botId: 'support', user })).at(-1)!;
    expect((await server.store.handoffs(conv.id)).at(-1)).toMatchObject({ state: 'ended', endedBy: 'ana', note: 'refunded' });
    await server.runtime.idle();
    await page.locator('#transcript .line', { hasText: 'anything else we can help with' }).waitFor();

    await page.click('#sign-out');
    await page.locator('#sign-in').waitFor();
    expect(await context.cookies()).toEqual([]);
    expect((await page.reload())?.status()).toBe(401);
    await nothingStored(page);
    await context.close();
    expect(pageErrors).toEqual([]);
  });

  it('on a phone: the queue, then one conversation at a time, with its choices and countdown', { timeout: 120_000 }, async () => {
    const user = '5215577770202';
    await handOff(user);
    const { context, page } = await open(PHONE);
    await signIn(page);
    const item = page.locator('#queue .item', { hasText: `+${user}` });
    await item.waitFor();
    expect(await page.locator('#conversation').isVisible()).toBe(false);
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
    expect(await fits()).toBe(true);
    await shot(page, 'inbox-phone-queue');

    await item.click();
    await page.locator('#offered .choice.tapped', { hasText: 'No, talk to a person' }).waitFor();
    expect(await page.locator('.queue-pane').isVisible()).toBe(false);
    await expect.poll(() => page.locator('#timeout-left').textContent()).toMatch(/^times out in \d+:\d\d$/);
    await page.click('#claim');
    await page.locator('#reply-send:not([disabled])').waitFor();
    // A canned reply of the billing queue goes into the box, to edit before sending.
    expect(await page.locator('#canned option').allTextContents()).toEqual(['Canned replies…', 'Refund on its way', 'Greeting']);
    await page.selectOption('#canned', { label: 'Refund on its way' });
    expect(await page.inputValue('#reply-text')).toBe('Your refund is on its way: 3 to 5 working days.');
    await page.fill('#reply-text', 'Hello from the phone.');
    await page.click('#reply-send');
    await page.locator('#transcript .line.agent.me', { hasText: 'Hello from the phone.' }).waitFor();
    expect(await fits()).toBe(true);
    await shot(page, 'inbox-phone-conversation');
    await server.runtime.idle();
    expect(delivered(user, 'Hello from the phone.')).toBe(1);

    // Reply buttons: the user gets them, taps one, and the inbox shows the choice.
    await page.click('[data-tab=choices]');
    await page.fill('#choice-body', 'Refund or credit?');
    await page.fill('#choice-options', 'Refund\nCredit on my bill');
    await page.click('#choice-send');
    await page.locator('#offered', { hasText: 'by ana · buttons: Refund or credit?' }).waitFor();
    expect(await page.locator('#offered .choice').allTextContents()).toEqual(['Refund', 'Credit on my bill']);
    await server.runtime.idle();
    const sent = server.sandbox!.messages.filter((m) => m.to === user && JSON.stringify(m.request).includes('Refund or credit?'));
    expect(sent).toHaveLength(1);
    await say(user, { type: 'reply.agent_credit_on_my_bill', id: 'agent_credit_on_my_bill', title: 'Credit on my bill', via: 'button' });
    await page.locator('#offered .choice.tapped', { hasText: 'Credit on my bill' }).waitFor();
    await page.locator('#transcript .line.user', { hasText: 'Credit on my bill' }).waitFor();

    await page.click('#back');
    await page.locator('#queue .item .badge', { hasText: 'yours' }).waitFor();
    await context.close();
    expect(pageErrors).toEqual([]);
  });
});
