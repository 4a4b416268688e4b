/**
 * The web simulator in a real browser (Debian's Chromium through playwright-core): a person taps
 * through a list, reply buttons and a flow; the page shows bubbles, state and raw requests, and the
 * store holds what production traffic would leave. Two tabs are two independent users.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import orderBot from '../fixtures/order-bot.js';
import webBot from '../fixtures/web-bot.js';
import { type TempDir, tempDir } from '../support/temp.js';
import { launchChromium, onlyLoopback, requireChromium, shot } from './browser.js';

let server: RunningServer;
let browser: Browser | undefined;
let dir: TempDir | undefined;
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  if (!browser) return; // each test fails with requireChromium()'s message
  dir = tempDir('colloquy-simulator-');
  const config = { ...loadConfig({}), port: 0, db: dir.path('simulator.db'), webhookSecret: 'simulator-test-secret', logLevel: 'silent' as const };
  server = await startServer({ bots: [orderBot, webBot], config, extensions: [simulatorExtension] });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  dir?.remove();
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

/** Opens a tab on the simulator; only the server's own URLs may load (no request leaves loopback). */
async function openTab(query: string): Promise<Page> {
  requireChromium();
  const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await onlyLoopback(page, server.url);
  await page.goto(`${server.url}/simulator${query}`);
  await page.locator('#presence', { hasText: 'online' }).waitFor();
  return page;
}

async function type(page: Page, text: string): Promise<void> {
  await page.fill('#text', text);
  await page.press('#text', 'Enter');
}

async function stateIs(page: Page, state: string): Promise<void> {
  await page.waitForFunction((s) => document.getElementById('state-value')?.textContent === s, state);
}

async function contextOf(page: Page): Promise<unknown> {
  return JSON.parse((await page.locator('#context').textContent()) ?? 'null');
}

/** The user's bubbles once the bot has processed them all (blue ticks). */
async function userTexts(page: Page, n: number): Promise<string[]> {
  await page.waitForFunction((count) => document.querySelectorAll('.bubble.out .ticks.read').length === count, n);
  return page.locator('.bubble.out').evaluateAll((els) => els.map((e) => e.querySelector('.text')?.textContent?.trim() ?? ''));
}

function db(): SqliteStore['db'] {
  if (!(server.store instanceof SqliteStore)) throw new Error('expected the SQLite store');
  return server.store.db;
}

describe('web simulator in Chromium', () => {
  it('taps through a list, reply buttons and a flow; the page and the store agree', { timeout: 90_000 }, async () => {
    const user = '5215511110001';
    const page = await openTab(`?bot=order&user=${user}`);
    expect(await page.locator('#user-number').textContent()).toBe(`+${user}`);
    await type(page, 'hi');
    expect(await page.locator('#webhook-note').textContent()).toContain('signed with COLLOQUY_WEBHOOK_SECRET');

    const list = page.locator('.bubble[data-kind=list]');
    await list.waitFor();
    expect(await list.locator('.header-text').textContent()).toBe('Pizza Place');
    expect(await list.locator('.text').first().textContent()).toBe('What would you like?');
    expect(await list.locator('.footer').textContent()).toBe('Prices include tax');
    await list.locator('.list-open', { hasText: 'See menu' }).click();
    const sheet = page.locator('.list-sheet');
    await sheet.waitFor();
    expect(await sheet.locator('.section-title').allTextContents()).toEqual(['Pizzas', 'Other']);
    expect(await sheet.locator('.row-title').allTextContents()).toEqual(['Margherita', 'Pepperoni', 'Order status']);
    expect(await sheet.locator('.row-option[data-id=margherita] .row-desc').textContent()).toBe('Tomato, mozzarella');
    await shot(page, 'simulator-list');
    await sheet.locator('.row-option', { hasText: 'Margherita' }).click();
    await sheet.locator('.list-send').click();
    await sheet.waitFor({ state: 'detached' });

    const buttons = page.locator('.msg.in', { has: page.locator('.bubble[data-kind=buttons]') });
    await buttons.waitFor();
    expect(await buttons.locator('.text').textContent()).toBe('Which size of margherita?');
    const image = await buttons.locator('.media.image').evaluate((el) => el.querySelector('img')?.getAttribute('src') ?? el.textContent);
    expect(image).toContain('https://example.com/pizza.jpg');
    expect(await buttons.locator('.reply-button').allTextContents()).toEqual(['Small', 'Large']);
    await buttons.locator('.reply-button', { hasText: 'Small' }).click();

    await page.locator('.bubble[data-kind=flow] .flow-open', { hasText: 'Enter address' }).click();
    const form = page.locator('.flow-screen');
    await form.waitFor();
    expect(await form.locator('.sheet-title').textContent()).toBe('ADDRESS');
    expect(await form.locator('#field-product_name').inputValue()).toBe('Pizza');
    expect(await form.locator('#field-product_price').inputValue()).toBe('12.5');
    await form.locator('.kv-key').fill('address');
    await form.locator('.kv-value').fill('1 Main St');
    await shot(page, 'simulator-flow');
    await form.locator('.flow-submit').click();
    await form.waitFor({ state: 'detached' });

    const thanks = page.locator('.bubble.in[data-kind=sms]');
    await thanks.waitFor();
    expect(await thanks.locator('.sms-label').textContent()).toBe('SMS');
    expect(await thanks.locator('.text').textContent()).toBe('Thanks! A small margherita to 1 Main St.');
    await stateIs(page, 'done');
    expect(await page.locator('#status-value').textContent()).toBe('done');
    expect(await contextOf(page)).toEqual({ user, item: 'margherita', size: 'small', address: '1 Main St' });
    expect(await userTexts(page, 4)).toEqual(['hi', 'Margherita', 'Small', 'Form sent']);
    expect(await page.locator('.bubble.out[data-via=flow] dd').allTextContents()).toEqual(['Pizza', '12.5', '1 Main St']);

    await page.locator('.request[data-endpoint=sms]').waitFor();
    const requests = await page.locator('.request').evaluateAll((els) => els.map((e) => [(e as HTMLElement).dataset['endpoint'], e.querySelector('.status')?.textContent]));
    expect(requests.filter(([e]) => e === 'messaging')).toEqual([
      ['messaging', '200'],
      ['messaging', '200'],
      ['messaging', '200'],
    ]);
    expect(requests.filter(([e]) => e === 'sms')).toEqual([['sms', '200']]);
    expect(requests.some(([e, s]) => e === 'token' && s === '200')).toBe(true);
    await page.locator('.request[data-endpoint=sms] summary').click();
    const smsBody = JSON.parse((await page.locator('.request[data-endpoint=sms] pre.json').first().textContent()) ?? '{}') as Record<string, unknown>;
    expect(smsBody).toMatchObject({ msisdns: [user], message: 'Thanks! A small margherita to 1 Main St.', tag: 'order' });
    await shot(page, 'simulator');

    const [conv, ...others] = await server.store.conversations({ botId: 'order', user });
    expect(others).toEqual([]);
    expect(conv).toMatchObject({ status: 'done', state: 'done' });
    expect((conv!.snapshot as { context: unknown }).context).toEqual({ user, item: 'margherita', size: 'small', address: '1 Main St' });
    const inbox = db().prepare('SELECT source, event, raw, state FROM inbox WHERE user_number = ? ORDER BY id').all(user) as { source: string; event: string; raw: string; state: string }[];
    expect(inbox.map((r) => [r.source, r.state])).toEqual(Array(4).fill(['whatsapp', 'done']));
    const events = inbox.map((r) => JSON.parse(r.event) as Record<string, unknown>);
    expect(events.map((e) => e['type'])).toEqual(['text', 'reply.margherita', 'reply.small', 'flow']);
    expect(events[1]).toMatchObject({ via: 'list', title: 'Margherita' });
    expect(events[2]).toMatchObject({ via: 'button', title: 'Small' });
    expect(events[3]).toEqual({ type: 'flow', token: conv?.flowToken, data: { product_name: 'Pizza', product_price: 12.5, address: '1 Main St' } });
    const sent = db().prepare('SELECT provider_id FROM outbox WHERE user_number = ? ORDER BY id').all(user) as { provider_id: string }[];
    const raws = inbox.map((r) => JSON.parse(r.raw) as { context?: { id: string }; interactive?: { nfm_reply?: { response_json: string } } });
    expect(raws.slice(1).map((r) => r.context?.id)).toEqual(sent.slice(0, 3).map((r) => r.provider_id));
    expect(JSON.parse(raws[3]?.interactive?.nfm_reply?.response_json ?? '{}')).toMatchObject({ flow_token: conv?.flowToken, address: '1 Main St' });
    await page.close();
  });

  it('keeps two tabs apart as two users, switches bots, renders video, document, declared forms and SMS as text', { timeout: 90_000 }, async () => {
    const [a, b] = ['5215522220001', '5215522220002'];
    const tabA = await openTab(`?bot=order&user=${a}`);
    const tabB = await openTab(`?bot=order&user=${b}`);
    await type(tabA, 'hello from A');
    await type(tabB, 'hello from B');
    for (const [tab, row] of [
      [tabA, 'Pepperoni'],
      [tabB, 'Margherita'],
    ] as const) {
      await tab.locator('.bubble[data-kind=list] .list-open').click();
      await tab.locator('.list-sheet .row-option', { hasText: row }).click();
      await tab.locator('.list-sheet .list-send').click();
      await stateIs(tab, 'size');
    }
    expect(await userTexts(tabA, 2)).toEqual(['hello from A', 'Pepperoni']);
    expect(await userTexts(tabB, 2)).toEqual(['hello from B', 'Margherita']);
    expect(await contextOf(tabA)).toEqual({ user: a, item: 'pepperoni' });
    expect(await contextOf(tabB)).toEqual({ user: b, item: 'margherita' });

    await tabB.selectOption('#bot-select', 'web');
    await tabB.locator('#bot-number', { hasText: '+15550000009' }).waitFor();
    expect(new URL(tabB.url()).searchParams.get('bot')).toBe('web');
    expect(new URL(tabB.url()).searchParams.get('user')).toBe(b);
    await tabB.locator('#presence', { hasText: 'online' }).waitFor();
    await type(tabB, 'hi');
    const welcome = tabB.locator('.bubble[data-kind=buttons]', { has: tabB.locator('.media.video') });
    await welcome.waitFor();
    expect(await welcome.locator('video').getAttribute('src')).toBe('https://example.com/welcome.mp4');
    expect(await welcome.locator('.text').textContent()).toBe('Welcome <b>friend</b> & <script>alert(1)</script>');
    expect(await welcome.locator('b, script').count()).toBe(0);
    await tabB.locator('.reply-button', { hasText: 'Show menu' }).click();
    const doc = tabB.locator('.media.document');
    await doc.waitFor();
    expect(await doc.getAttribute('href')).toBe('https://example.com/menu.pdf');
    expect(await doc.locator('.doc-name').textContent()).toBe('menu.pdf');
    expect(await doc.locator('.doc-badge').textContent()).toBe('PDF');
    await tabB.locator('.reply-button', { hasText: 'Fill my profile' }).click();
    await tabB.locator('.flow-open', { hasText: 'Open profile' }).click();

    const form = tabB.locator('.flow-screen');
    await form.waitFor();
    expect(await form.locator('.sheet-title').textContent()).toBe('Your profile');
    expect(await form.locator('.field-label, .field.check span').allTextContents()).toEqual(['Name *', 'Age', 'Shirt size *', 'Send me news', 'Birthday']);
    expect(await form.locator('.kv').count()).toBe(0);
    await form.locator('.flow-submit').click();
    expect(await form.isVisible()).toBe(true); // required fields are empty: nothing was sent
    await form.locator('#field-name').fill('Ana');
    await form.locator('#field-age').fill('31');
    await form.locator('#field-size').selectOption('M');
    await form.locator('#field-newsletter').check();
    await form.locator('.flow-submit').click();
    await stateIs(tabB, 'saved');
    expect(await tabB.locator('.bubble.in[data-kind=sms] .text').allTextContents()).toEqual(['Profile saved for Ana', 'Write anything to start again.']);
    expect(await contextOf(tabB)).toEqual({ user: b, profile: { name: 'Ana', age: 31, size: 'M', newsletter: true } });

    await tabB.click('#mode');
    expect(await tabB.locator('#mode').textContent()).toBe('SMS');
    await type(tabB, 'again by SMS');
    await stateIs(tabB, 'welcome');
    await tabB.locator('.bubble.out.sms', { hasText: 'again by SMS' }).locator('.ticks.read').waitFor();
    const sources = db().prepare("SELECT source FROM inbox WHERE user_number = ? AND bot_id = 'web' ORDER BY id").all(b) as { source: string }[];
    expect(sources.map((r) => r.source)).toEqual(['whatsapp', 'whatsapp', 'whatsapp', 'whatsapp', 'sms']);
    await tabB.locator('.chat').evaluate((el) => el.scrollTo(0, 0));
    await shot(tabB, 'simulator-web');

    // Tab A saw none of this: its chat, state and requests are still its own.
    expect(await userTexts(tabA, 2)).toEqual(['hello from A', 'Pepperoni']);
    expect(await tabA.locator('#state-value').textContent()).toBe('size');
    const addressed = await tabA.locator('.request:not([data-endpoint=token])').count();
    expect(addressed).toBe(2);
    expect(await server.store.conversations({ botId: 'web', user: a })).toEqual([]);
    await tabA.close();
    await tabB.close();
  });
});
