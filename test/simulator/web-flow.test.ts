/**
 * Live flows in the web simulator: the appointments bot walked to a booking in Chromium, each
 * screen of its flow answered by the server's own `POST /flows` (the simulator playing WhatsApp:
 * encrypted with the sandbox's endpoint key, signed with the app secret); then the simulator API's
 * refusals without a browser.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import { createAppointmentsBot, freeTimes } from '../../bots/appointments.js';
import { eventually } from '../support/eventually.js';
import { launchChromium, onlyLoopback, requireChromium, shot } from './browser.js';

const SECRET = 'simulator-flow-secret';
/** Thursday 26 November 2026. */
const TODAY = new Date('2026-11-26T10:15:00Z');
/** The bot's date: a test moves it past the day picked, so the endpoint refuses the day meanwhile. */
let today = TODAY;

let server: RunningServer;
let browser: Browser | undefined;
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  const config = { ...loadConfig({ HOST: '127.0.0.1', COLLOQUY_WEBHOOK_SECRET: SECRET }), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [createAppointmentsBot({ today: () => today })], config, extensions: [simulatorExtension] });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  expect(pageErrors).toEqual([]);
});

async function openTab(user: string): Promise<Page> {
  requireChromium();
  const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await onlyLoopback(page, server.url);
  await page.goto(`${server.url}/simulator?bot=appointments&user=${user}`);
  await page.locator('#presence', { hasText: 'online' }).waitFor();
  return page;
}

const metric = async (pattern: RegExp): Promise<number> => Number((await server.metrics.render()).match(pattern)?.[1] ?? 0);

describe('a live flow in the web simulator (Chromium)', () => {
  it('books through the appointments flow: days, times, an error on a screen, back, confirm; one booking; the old button then shows 427 and is disabled', { timeout: 90_000 }, async () => {
    const user = '5215533330001';
    const page = await openTab(user);
    await page.fill('#text', 'hi');
    await page.press('#text', 'Enter');
    await page.locator('.bubble[data-kind=list] .list-open').click();
    await page.locator('.list-sheet .row-option', { hasText: 'Haircut' }).click();
    await page.locator('.list-sheet .list-send').click();
    const buttons = page.locator('.msg.in', { has: page.locator('.bubble[data-kind=buttons]') });
    await buttons.locator('.media.image').waitFor();
    expect(await buttons.locator('.reply-button').allTextContents()).toEqual(['Tue 10:00', 'Tue 13:30', 'Other times']);
    await buttons.locator('.reply-button', { hasText: 'Other times' }).click();

    const cta = page.locator('.bubble[data-kind=flow] .flow-open', { hasText: 'See times' });
    await cta.click();
    const sheet = page.locator('.flow-screen');
    await sheet.locator('.flow-body[data-screen=DAYS]').waitFor();
    expect(await sheet.locator('.sheet-title').textContent()).toBe('Pick a day');
    expect(await sheet.locator('#field-day option').allTextContents()).toEqual(['Choose…', 'Fri 27 Nov', 'Mon 30 Nov', 'Tue 1 Dec', 'Wed 2 Dec', 'Thu 3 Dec']);
    // A value the screen does not offer (an edited page) is refused by the simulator, on the screen, and nothing is sent.
    await sheet.locator('#field-day').evaluate((el) => el.append(new Option('Sat 28 Nov', '2026-11-28')));
    await sheet.locator('#field-day').selectOption('2026-11-28');
    await sheet.locator('.flow-submit').click();
    await sheet.locator('.flow-error', { hasText: 'Day: "2026-11-28" is not one of the choices' }).waitFor();
    await sheet.locator('#field-day').selectOption({ label: 'Mon 30 Nov' });
    await sheet.locator('.flow-submit').click();

    const times = freeTimes('2026-11-30');
    await sheet.locator('.flow-body[data-screen=SLOTS]').waitFor();
    expect(await sheet.locator('.sheet-title').textContent()).toBe('Pick a time');
    expect(await sheet.locator('dd[data-name=day_title]').textContent()).toBe('Mon 30 Nov');
    expect(await sheet.locator('#field-slot option').allTextContents()).toEqual(['Choose…', ...times]);
    // The day went by while the screen was open: the endpoint answers an error on this screen, which keeps its data.
    today = new Date('2026-12-01T08:00:00Z');
    await sheet.locator('#field-slot').selectOption(times[1]!);
    await sheet.locator('.flow-submit').click();
    await sheet.locator('.flow-error', { hasText: 'Pick one of the days shown.' }).waitFor();
    expect(await sheet.locator('.flow-body').getAttribute('data-screen')).toBe('SLOTS');
    expect(await sheet.locator('dd[data-name=day_title]').textContent()).toBe('Mon 30 Nov');
    today = TODAY;
    await sheet.locator('#field-slot').selectOption(times[1]!);
    await sheet.locator('.flow-submit').click();
    await sheet.locator('.flow-body[data-screen=CONFIRM]').waitFor();
    expect(await sheet.locator('dd[data-name=summary]').textContent()).toBe(`Haircut (30 min) on Mon 30 Nov at ${times[1]}`);

    // The back arrow: the times again, another one picked.
    await sheet.locator('.sheet-head .back').click();
    await sheet.locator('.flow-body[data-screen=SLOTS]').waitFor();
    await sheet.locator('#field-slot').selectOption(times[0]!);
    await sheet.locator('.flow-submit').click();
    await sheet.locator('dd[data-name=summary]', { hasText: `at ${times[0]}` }).waitFor();
    await shot(page, 'simulator-live-flow');
    const [answer] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/simulator/api/flow/submit')), sheet.locator('.flow-submit').click()]);
    await sheet.waitFor({ state: 'detached' });
    // SUCCESS: the simulator sent WhatsApp's nfm_reply to the webhook, which took it.
    expect(await answer.json()).toMatchObject({ step: { kind: 'complete', params: { booking: `SN-20261130-${times[0]!.replace(':', '')}` } }, reply: { webhook: { status: 200, ok: true } } });

    const booked = `Booked: Haircut, Mon 30 Nov ${times[0]}. See you at Studio Nova!`;
    await page.locator('.bubble.in[data-kind=sms] .text', { hasText: booked }).waitFor();
    await page.waitForFunction(() => document.getElementById('state-value')?.textContent === 'booked');

    // The store: one booking; the nfm_reply ran no turn of its own (no second confirmation, no new conversation).
    await server.runtime.idle();
    const conv = (await server.store.conversations({ botId: 'appointments', user }))[0]!;
    expect(conv).toMatchObject({ state: 'booked', status: 'done' });
    const out = (await server.store.transcript(conv.id)).filter((e) => e.direction === 'out');
    expect(out.filter((e) => JSON.stringify(e.record.message).includes('Booked:'))).toHaveLength(1);
    expect(await server.store.conversations({ botId: 'appointments', user })).toHaveLength(1);
    // Every screen went through the endpoint, signed (none refused).
    expect(await metric(/colloquy_flow_requests_total\{action="data_exchange",outcome="ok"\} (\d+)/)).toBeGreaterThanOrEqual(4);
    expect(await metric(/colloquy_flow_requests_total\{action="INIT",outcome="ok"\} (\d+)/)).toBeGreaterThanOrEqual(1);
    expect(await metric(/outcome="signature"\} (\d+)/)).toBe(0);

    // The conversation is over: the form's button opens a 427, whose message shows, and the button is disabled.
    await cta.click();
    await sheet.locator('.flow-closed', { hasText: 'These times are out of date.' }).waitFor();
    await sheet.locator('.flow-submit', { hasText: 'OK' }).click();
    await eventually(async () => expect(await cta.isDisabled()).toBe(true));
    expect(await page.locator('.bubble[data-kind=flow] .flow-closed-note').textContent()).toBe('These times are out of date. Send us a message to see the free times again.');
    await page.close();
  });
});

describe('the simulator API of live flows', () => {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${server.url}/simulator/api/flow/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it('opens through the endpoint, refuses a choice the screen does not offer, and a flow that was not opened', async () => {
    const user = '5215533330002';
    await server.sandbox!.deliver.text(user, 'hi', { to: '15550000002' });
    await server.sandbox!.deliver.listReply(user, { id: 'color', title: 'Color' }, { to: '15550000002' });
    await eventually(() => expect(JSON.stringify(server.sandbox!.messagesTo(user).at(-1)?.request)).toContain('Other times'));
    await server.sandbox!.deliver.buttonReply(user, { id: 'more', title: 'Other times' }, { to: '15550000002' });
    const token = await eventually(() => {
      const t = JSON.stringify(server.sandbox!.messagesTo(user).at(-1)?.request).match(/"flow_token":"([^"]+)"/)?.[1];
      expect(t).toBeDefined();
      return t!;
    });
    const key = { bot: 'appointments', user, token };
    expect((await post('submit', { ...key, values: { day: '2026-11-27' } })).status).toBe(404);
    const opened = await post('open', { ...key, flowId: '1029384756' });
    expect(opened).toMatchObject({ status: 200, body: { step: { kind: 'screen', screen: 'DAYS', title: 'Pick a day', canGoBack: false } } });
    expect((opened.body['step'] as { fields: unknown[] }).fields).toEqual([
      { name: 'day', label: 'Day', type: 'select', required: true, choices: expect.arrayContaining([{ id: '2026-11-27', title: 'Fri 27 Nov' }]) },
    ]);
    expect(await post('submit', { ...key, values: { day: '2026-11-28' } })).toMatchObject({
      status: 400,
      body: { error: 'bad_input', message: expect.stringContaining('"2026-11-28" is not one of the choices') },
    });
    expect(await post('submit', { ...key, values: {} })).toMatchObject({ status: 400, body: { message: 'Day is required' } });
    expect(await post('submit', { ...key, values: { day: '2026-11-27' } })).toMatchObject({
      status: 200,
      body: {
        step: {
          screen: 'SLOTS',
          values: [
            { name: 'day', text: '2026-11-27' },
            { name: 'day_title', text: 'Fri 27 Nov' },
          ],
          canGoBack: true,
        },
      },
    });
    expect(await post('back', key)).toMatchObject({ status: 200, body: { step: { screen: 'DAYS' } } });
    expect((await post('open', { ...key, user: 'abc', flowId: 'x' })).status).toBe(400);
    expect((await post('back', { ...key, user: '5215533339999' })).status).toBe(404);
  });
});
