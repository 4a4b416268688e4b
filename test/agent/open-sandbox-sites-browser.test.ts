/**
 * In Chromium: a page of another site (http://localhost:<other port>, a different site from
 * http://127.0.0.1:<server port>) cannot make the developer's browser claim a handoff and write to
 * a customer through the sandbox's open agents' API with a plain `fetch(…, { mode: 'no-cors' })`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium, requireChromium } from '../simulator/browser.js';
import { serve, USER, walkToHandoff } from './helpers.js';

let browser: Browser | undefined;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

it('another site cannot claim and write to a customer through the open sandbox API', { timeout: 60_000 }, async () => {
  requireChromium();
  const { server: s } = await serve({ token: null });
  const evil: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>cat pictures</title>'));
  try {
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const id = await walkToHandoff(s);
    const before = s.sandbox!.messages.filter((m) => m.to === USER).length;
    const page = await browser!.newPage();
    await page.goto(`http://localhost:${(evil.address() as AddressInfo).port}/`);
    await page.evaluate(
      async ({ api, id }) => {
        const post = (path: string, body: unknown) =>
          fetch(`${api}/agent/handoffs/${id}/${path}`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(body) });
        await post('claim', { agent: 'support' });
        await post('messages', { agent: 'support', text: 'Your account is locked: confirm your card at https://evil.example' });
      },
      { api: s.url, id },
    );
    await s.runtime.idle();
    expect((await s.store.openHandoff(id))!.state).toBe('waiting');
    expect(s.sandbox!.messages.filter((m) => m.to === USER)).toHaveLength(before);
  } finally {
    evil.close();
    await s.close();
  }
});
