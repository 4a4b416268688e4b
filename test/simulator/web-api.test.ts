/** The web simulator's HTTP side without a browser: the page, its assets, the JSON API and its events. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Bot } from '../../src/conversation/bot.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { simulatorExtension } from '../../src/simulator/web/index.js';
import { PAGE_DIR } from '../../src/simulator/web/page.js';
import { dottedState, requestsAbout } from '../../src/simulator/web/view.js';
import type { View } from '../../src/simulator/web/view.js';
import type { RecordedRequest } from '../../src/sandbox/types.js';
import orderBot from '../fixtures/order-bot.js';
import webBot from '../fixtures/web-bot.js';
import pizzaBot from '../../bots/pizza.js';

const USER = '5215533330001';
let server: RunningServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(secret?: string, bots: readonly Bot[] = [orderBot, webBot]): Promise<RunningServer> {
  const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const, ...(secret !== undefined && { webhookSecret: secret }) };
  server = await startServer({ bots, config, extensions: [simulatorExtension] });
  return server;
}

function post(s: RunningServer, path: string, body: unknown, type = 'application/json'): Promise<Response> {
  return fetch(`${s.url}/simulator/api/${path}`, { method: 'POST', headers: { 'content-type': type }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

async function state(s: RunningServer, bot: string, user: string): Promise<View> {
  const res = await fetch(`${s.url}/simulator/api/state?bot=${bot}&user=${user}`);
  expect(res.status).toBe(200);
  return (await res.json()) as View;
}

describe('web simulator over HTTP', () => {
  it('serves the page with a strict CSP and its assets, and nothing else', async () => {
    const s = await start();
    for (const path of ['/simulator', '/simulator/']) {
      const res = await fetch(`${s.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      const html = await res.text();
      expect(html).toContain('data-base="/simulator"');
      expect(html).toContain('src="/simulator/assets/app.js"');
      expect(html).toContain('<link rel="icon" type="image/svg+xml" href="/simulator/assets/favicon.svg">');
    }
    const types: Record<string, RegExp> = { js: /^text\/javascript; charset=utf-8$/i, css: /^text\/css; charset=utf-8$/i, svg: /^image\/svg\+xml/, html: /^text\/html/ };
    const names = readdirSync(PAGE_DIR);
    expect(names).toEqual(expect.arrayContaining(['app.js', 'chat.js', 'phone.css', 'favicon.svg']));
    for (const name of names) {
      const res = await fetch(`${s.url}/simulator/assets/${name}`);
      expect(res.status, name).toBe(200);
      expect(res.headers.get('content-type'), name).toMatch(types[name.split('.').pop()!]!);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await res.text()).toBe(readFileSync(join(PAGE_DIR, name), 'utf8'));
    }
    for (const name of ['constructor', '__proto__', 'nope.js', '..%2Fpackage.json', '%2e%2e/package.json']) expect((await fetch(`${s.url}/simulator/assets/${name}`)).status).toBe(404);
    expect((await fetch(`${s.url}/simulator/api/nope`)).status).toBe(404);
  });

  it('lists the bots with their numbers and flow forms', async () => {
    const s = await start();
    const body = (await (await fetch(`${s.url}/simulator/api/bots`)).json()) as { bots: { id: string; number: string; flowForms: Record<string, unknown> }[] };
    expect(body.bots.map((b) => [b.id, b.number])).toEqual([
      ['order', '15550000001'],
      ['web', '15550000009'],
    ]);
    expect(body.bots[0]?.flowForms).toEqual({});
    expect(Object.keys(body.bots[1]?.flowForms ?? {})).toEqual(['555']);
  });

  it("says whether the webhook posts are signed, as the page's banner does", async () => {
    const signed = async (s: RunningServer): Promise<unknown> => ((await (await fetch(`${s.url}/simulator/api/bots`)).json()) as { signed: unknown }).signed;
    expect(await signed(await start())).toBe(false);
    await server?.close();
    expect(await signed(await start('a-secret'))).toBe(true);
  });

  it('shows a nested state as the dotted path expectState takes', async () => {
    const s = await start(undefined, [pizzaBot]);
    expect((await post(s, 'text', { bot: 'pizza', user: USER, text: 'hi' })).status).toBe(200);
    await s.runtime.idle();
    expect((await state(s, 'pizza', USER)).conversation?.state).toBe('ordering.menu');
    expect(dottedState('done')).toBe('done');
    expect(dottedState('{"a":{"b":"c"},"d":"e"}')).toBe('a.b.c, d.e');
    expect(dottedState('{not json')).toBe('{not json');
  });

  it('refuses bad input with a clear JSON error', async () => {
    const s = await start();
    const bad = await post(s, 'text', { bot: 'order', user: '+52 55', text: 'hi' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'bad_request', message: expect.stringContaining('user') });
    expect((await post(s, 'text', { bot: 'ghost', user: USER, text: 'hi' })).status).toBe(404);
    expect((await post(s, 'text', 'bot=order', 'text/plain')).status).toBe(415);
    expect((await post(s, 'tap', { bot: 'order', user: USER, kind: 'row', id: 'x', title: 'X' })).status).toBe(400);
    expect((await post(s, 'flow', { bot: 'order', user: USER, data: {} })).status).toBe(400);
    expect((await fetch(`${s.url}/simulator/api/state?bot=order`)).status).toBe(400);
    expect((await fetch(`${s.url}/simulator/api/events?bot=ghost&user=${USER}`)).status).toBe(404);
    expect(s.sandbox?.requests).toEqual([]);
  });

  it('posts through the signed webhook to the bot whose number the user writes to', async () => {
    const s = await start('api-test-secret');
    const sent = await post(s, 'text', { bot: 'web', user: USER, text: 'hi' });
    expect(sent.status).toBe(200);
    const answer = (await sent.json()) as { id: string; webhook: { status: number } };
    expect(answer.webhook.status).toBe(200);
    await s.runtime.idle();
    const view = await state(s, 'web', USER);
    expect(view.conversation).toMatchObject({ state: 'welcome', status: 'active' });
    expect(view.timeline[0]).toMatchObject({ kind: 'user', id: answer.id, text: 'hi', source: 'whatsapp', state: 'done' });
    expect(view.timeline[1]).toMatchObject({ kind: 'bot', channel: 'interactive', messageKind: 'buttons', state: 'sent' });
    expect((await state(s, 'order', USER)).conversation).toBeNull();

    const tap = await post(s, 'tap', { bot: 'web', user: USER, kind: 'button', id: 'menu', title: 'Show menu' });
    expect(tap.status).toBe(200);
    const sms = await post(s, 'sms', { bot: 'order', user: USER, text: 'hello by SMS' });
    expect(((await sms.json()) as { id: string }).id).toMatch(/^sms:/);
    await s.runtime.idle();
    expect((await state(s, 'web', USER)).conversation?.state).toBe('menu');
    const order = await state(s, 'order', USER);
    expect(order.conversation?.state).toBe('menu');
    expect(order.timeline[0]).toMatchObject({ kind: 'user', source: 'sms', via: 'sms', text: 'hello by SMS' });
  });

  it('streams views as Server-Sent Events and ends them when the server closes', async () => {
    const s = await start();
    const controller = new AbortController();
    const res = await fetch(`${s.url}/simulator/api/events?bot=order&user=${USER}`, { signal: controller.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const views: View[] = [];
    let buffer = '';
    const next = async (): Promise<View> => {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const chunk = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^event: view\ndata: (.*)$/m.exec(chunk)?.[1];
          if (data !== undefined) return JSON.parse(data) as View;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        buffer += value;
      }
    };
    views.push(await next());
    expect(views[0]).toMatchObject({ bot: 'order', user: USER, conversation: null, timeline: [] });
    await post(s, 'text', { bot: 'order', user: USER, text: 'hi' });
    let view = await next();
    while (!view.timeline.some((i) => i.kind === 'bot' && i.state === 'sent')) view = await next();
    expect(view.conversation?.state).toBe('menu');
    expect(view.requests.map((r) => r.endpoint)).toEqual(['token', 'messaging']);

    const started = Date.now();
    await s.close();
    server = undefined;
    expect(Date.now() - started).toBeLessThan(4_000);
    controller.abort();
  });

  it('shows a user only the requests about them and their bot', () => {
    const bot = { id: 'order', number: '15550000001', smsTag: 'order', flowForms: {} };
    const req = (endpoint: RecordedRequest['endpoint'], body: unknown): RecordedRequest => ({ seq: 1, endpoint, method: 'POST', path: '/', url: '/', headers: {}, body, status: 200, at: 0 });
    const all = [
      req('token', { grant_type: 'client_credentials' }),
      req('messaging', { from: '15550000001', to: USER }),
      req('messaging', { from: '15550000009', to: USER }),
      req('messaging', { from: '15550000001', to: '5215500000000' }),
      req('sms', { msisdns: [USER], message: 'x', tag: 'order' }),
      req('sms', { msisdns: [USER], message: 'x', tag: 'web' }),
    ];
    expect(requestsAbout(all, bot, USER)).toEqual([all[0], all[1], all[4]]);
  });
});
