/**
 * A handoff on the customer's page, in Chromium: the user walks the support bot to a person; an
 * agent claims, writes and releases through the agents' API (the sandbox's, open on loopback);
 * the page shows the banner (waiting for an agent and when it times out, then who has the chat),
 * the chat's system lines, the agent's messages under the agent's name, the user's messages going
 * to the agent (their ticks say so), and the bot back after; an internal note never shows.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import support from '../../bots/support.js';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import { launchChromium, onlyLoopback, requireChromium, shot } from './browser.js';

const USER = '5215566660001';
let server: RunningServer | undefined;
let browser: Browser | undefined;
const pageErrors: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  if (!browser) return; // the test fails with requireChromium()'s message
  const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [support], config, extensions: [simulatorExtension] });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

afterEach(() => {
  expect(pageErrors.splice(0)).toEqual([]);
});

async function openTab(width: number, height: number): Promise<Page> {
  requireChromium();
  const page = await browser!.newPage({ viewport: { width, height } });
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => void (m.type() === 'error' && pageErrors.push(m.text())));
  await onlyLoopback(page, server!.url);
  await page.goto(`${server!.url}/simulator?bot=support&user=${USER}`);
  await page.locator('#presence', { hasText: 'online' }).waitFor();
  return page;
}

async function type(page: Page, text: string): Promise<void> {
  await page.fill('#text', text);
  await page.press('#text', 'Enter');
}

/** An agent's request to the agents' API, as a helpdesk front end would make it. */
async function agent(path: string, body: unknown): Promise<void> {
  const res = await fetch(`${server!.url}/agent/handoffs/${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, await res.text()).toBe(path.endsWith('/messages') ? 202 : 200);
}

describe('a handoff on the customer’s page in Chromium', () => {
  it('waiting → ana has this chat → ana’s messages under her name → the bot has it back', { timeout: 90_000 }, async () => {
    const page = await openTab(1280, 860);
    await type(page, 'hi');
    await page.locator('.bubble[data-kind=list] .list-open').click();
    await page.locator('.list-sheet .row-option', { hasText: 'Wi-Fi problems' }).click();
    await page.locator('.list-sheet .list-send').click();
    await page.locator('.reply-button', { hasText: 'No, talk to a person' }).click();
    await page.locator('.bubble.in', { hasText: 'Please describe' }).waitFor();
    expect(await page.locator('#handoff-state').isHidden()).toBe(true);
    await type(page, 'The router blinks red.');

    const banner = page.locator('#handoff-state');
    await page.locator('#handoff-state[data-state=waiting]').waitFor();
    expect(await banner.textContent()).toMatch(/^a person takes over this chat \(queue wifi\): waiting for an agent; it times out in (10|9)m$/);
    expect(await page.locator('.note.handoff[data-handoff=started]').textContent()).toBe('a person takes over this chat (queue wifi)');
    await shot(page, 'handoff-waiting');

    const conv = (await server!.store.conversations({ botId: 'support', user: USER })).at(-1)!;
    await agent(`${conv.id}/claim`, { agent: 'ana' });
    await page.locator('#handoff-state[data-state=claimed]', { hasText: 'ana has this chat' }).waitFor();
    await page.locator('.note.handoff[data-handoff=claimed]', { hasText: 'ana has this chat' }).waitFor();
    // An internal note: the agents' own, never on the customer's page.
    expect((await server!.store.addHandoffNote(conv.id, { name: 'ana', via: 'open' }, 'NOTE-5521 wants a refund', Date.now())).ok).toBe(true);
    await type(page, 'Are you there?');
    // The user's message went to ana, not through the bot: its ticks say so.
    await page.locator('.bubble.out', { hasText: 'Are you there?' }).locator('.ticks.person[title="went to ana, who has this chat"]').waitFor();

    await agent(`${conv.id}/messages`, { agent: 'ana', text: 'Hi, Ana here. Let me check your line.' });
    await agent(`${conv.id}/messages`, { agent: 'ana', message: { kind: 'buttons', body: 'Is the light green now?', buttons: [{ id: 'green', title: 'Yes, green' }] } });
    const byAna = page.locator('.bubble.in.agent[data-agent=ana]');
    await byAna.nth(1).waitFor();
    expect(await byAna.locator('.byline').allTextContents()).toEqual(['ana (agent, by SMS)', 'ana (agent)']);
    expect(await byAna.nth(0).locator('.text').textContent()).toBe('Hi, Ana here. Let me check your line.');
    // The bot's own messages carry no name.
    expect(await page.locator('.bubble.in:not(.agent) .byline').count()).toBe(0);
    await shot(page, 'handoff-claimed');

    await agent(`${conv.id}/release`, { agent: 'ana', note: 'line reset' });
    await page.locator('.note.handoff[data-handoff=ended]', { hasText: 'ana handed the chat back to the bot' }).waitFor();
    await page.locator('.bubble.in', { hasText: 'You are back with the assistant' }).waitFor();
    await banner.waitFor({ state: 'hidden' });
    const notes = await page.locator('.note.handoff').allTextContents();
    expect(notes).toEqual(['a person takes over this chat (queue wifi)', 'ana has this chat', 'ana handed the chat back to the bot']);
    expect(await page.locator('.bubble.out', { hasText: 'The router blinks red.' }).locator('.ticks').getAttribute('title')).toBe('processed by the bot');
    const html = await page.content();
    expect(html).not.toContain('NOTE-5521');
    expect(html).not.toContain('line reset'); // a release's note is the agents' too
    await shot(page, 'handoff-back');
    await page.close();
  });
});
