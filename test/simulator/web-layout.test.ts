/**
 * The web simulator on a laptop screen, in Chromium: at 1366×768 and 1280×720 the whole pizza
 * order is walked with the composer and the bot picker in view throughout (the chat scrolls inside
 * itself, the page never scrolls). Also: a list row is selected and then sent, the state shows as
 * a dotted path, media headers load once, the banner tells whether webhook posts are signed.
 * Screenshots go to SHOTS (see ./browser.ts).
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import appointmentsBot from '../../bots/appointments.js';
import pizzaBot from '../../bots/pizza.js';
import supportBot from '../../bots/support.js';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import { launchChromium, onlyLoopback, requireChromium, shot } from './browser.js';

const PHOTO = 'https://images.example.com/pizza/margherita.jpg';
let server: RunningServer | undefined;
let browser: Browser | undefined;
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  if (!browser) return; // each test fails with requireChromium()'s message
  const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [appointmentsBot, pizzaBot, supportBot], config, extensions: [simulatorExtension] });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  expect(pageErrors.splice(0)).toEqual([]);
});

async function openTab(width: number, height: number, user: string): Promise<{ page: Page; photoRequests: () => number }> {
  requireChromium();
  const page = await browser!.newPage({ viewport: { width, height } });
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  let photos = 0;
  page.on('request', (r) => void (r.url() === PHOTO && photos++));
  await onlyLoopback(page, server!.url);
  await page.goto(`${server!.url}/simulator?bot=pizza&user=${user}`);
  await page.locator('#presence', { hasText: 'online' }).waitFor();
  return { page, photoRequests: () => photos };
}

/** The page fits the viewport: not scrolled, nothing below the fold, composer and picker in view. */
async function expectFits(page: Page, when: string): Promise<void> {
  const { width, height } = page.viewportSize()!;
  const scroll = await page.evaluate(() => ({ y: window.scrollY, page: document.documentElement.scrollHeight, view: window.innerHeight }));
  expect(scroll.y, `${when}: the page scrolled`).toBe(0);
  expect(scroll.page, `${when}: the page is taller than the window`).toBeLessThanOrEqual(scroll.view);
  for (const id of ['#composer', '#bot-picker', '#state-value, .state-panel .empty']) {
    // Found and measured in one step: the state panel is re-rendered as updates arrive, so an
    // element found first and measured after could already have been replaced.
    const box = await page.evaluate((selector) => {
      const el = document.querySelector(selector);
      const r = el?.getBoundingClientRect();
      return r && r.width > 0 && r.height > 0 ? { x: r.x, y: r.y, width: r.width, height: r.height } : null;
    }, id);
    expect(box, `${when}: ${id} is not shown`).not.toBeNull();
    expect(box!.y, `${when}: ${id} is above the window`).toBeGreaterThanOrEqual(0);
    expect(box!.y + box!.height, `${when}: ${id} is below the fold`).toBeLessThanOrEqual(height);
    expect(box!.x + box!.width, `${when}: ${id} is off to the right`).toBeLessThanOrEqual(width);
  }
}

async function type(page: Page, text: string): Promise<void> {
  await page.fill('#text', text);
  await page.press('#text', 'Enter');
}

async function stateIs(page: Page, state: string): Promise<void> {
  await page.waitForFunction((s) => document.getElementById('state-value')?.textContent === s, state);
}

describe('web simulator on a laptop screen', () => {
  for (const [width, height] of [
    [1366, 768],
    [1280, 720],
  ] as const) {
    it(`walks the pizza order at ${width}×${height} with the composer and the bot picker in view`, { timeout: 90_000 }, async () => {
      const size = `${width}x${height}`;
      const { page, photoRequests } = await openTab(width, height, `52155${width}${height}`.slice(0, 13));
      expect(await page.locator('#bot-select').inputValue()).toBe('pizza');
      await expectFits(page, 'on opening');
      await shot(page, `pizza-${size}-1-open`);

      await type(page, 'hi');
      const list = page.locator('.bubble[data-kind=list]');
      await list.waitFor();
      await stateIs(page, 'ordering.menu');
      expect(await page.locator('#webhook-note').textContent()).toContain('unsigned (COLLOQUY_WEBHOOK_SECRET is not set)');
      await expectFits(page, 'after the first message');

      // A row is selected first, as on a phone; only Send sends it.
      await list.locator('.list-open').click();
      const sheet = page.locator('.list-sheet');
      const send = sheet.locator('.list-send');
      expect(await send.isDisabled()).toBe(true);
      await sheet.locator('.row-option', { hasText: 'Margherita' }).click();
      expect(await sheet.locator('.row-option[aria-checked=true] .row-title').allTextContents()).toEqual(['Margherita']);
      await sheet.locator('.row-option', { hasText: 'Pepperoni' }).click();
      expect(await sheet.locator('.row-option[aria-checked=true] .row-title').allTextContents()).toEqual(['Pepperoni']);
      await sheet.locator('.row-option', { hasText: 'Margherita' }).click();
      expect(await page.locator('.bubble.out').count()).toBe(1); // selecting sent nothing
      expect(await send.isEnabled()).toBe(true);
      await expectFits(page, 'with the list open');
      await shot(page, `pizza-${size}-2-list-selected`);
      await send.click();
      await sheet.waitFor({ state: 'detached' });

      const sizes = page.locator('.msg.in', { has: page.locator('.bubble[data-kind=buttons] .media.image') });
      await sizes.waitFor();
      await stateIs(page, 'ordering.size');
      await sizes.locator('.reply-button', { hasText: 'Small' }).click();
      await page.locator('.bubble[data-kind=flow] .flow-open').click();
      const form = page.locator('.flow-screen');
      await form.locator('#field-street').fill('Calle 5 de Mayo 12');
      await form.locator('#field-city').fill('Puebla');
      await expectFits(page, 'with the flow open');
      await shot(page, `pizza-${size}-3-flow`);
      await form.locator('.flow-submit').click();
      await form.waitFor({ state: 'detached' });

      await page.locator('.bubble[data-kind=buttons] .media.document').waitFor();
      await stateIs(page, 'placed');
      await page.locator('.reply-button', { hasText: 'Track my order' }).click();
      await page.locator('.bubble.in .text', { hasText: 'is in the oven' }).waitFor();
      await page.locator('.bubble.in .text', { hasText: 'Enjoy your meal!' }).waitFor();
      await stateIs(page, 'done');
      await page.waitForFunction(() => document.querySelectorAll('.bubble.out .ticks.read').length === 5);
      await expectFits(page, 'after the whole order');

      // The chat scrolled inside itself, to its end.
      const chat = await page.locator('#chat').evaluate((el) => ({ overflow: el.scrollHeight > el.clientHeight, atEnd: el.scrollHeight - el.scrollTop - el.clientHeight < 2 }));
      expect(chat).toEqual({ overflow: true, atEnd: true });
      await shot(page, `pizza-${size}-4-done`);
      // The photo was asked for once, though the chat was rebuilt at every step (it fails to load here: no network).
      expect(photoRequests()).toBe(1);
      await page.close();
    });
  }
});
