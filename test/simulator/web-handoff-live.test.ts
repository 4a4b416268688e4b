/**
 * The customer's page follows a handoff live: an agent claims, writes and releases through the
 * agents' API (the sandbox's, open on loopback) and the page's Server-Sent Events carry each
 * change, pushed by the handoff desk rather than found by the slow tick (set to an hour here).
 */
import { afterEach, expect, it } from 'vitest';
import support from '../../bots/support.js';
import { loadConfig } from '../../src/config.js';
import { startServer, type RunningServer, type ServerExtension } from '../../src/server.js';
import { createSimulatorRouter } from '../../src/simulator/web/index.js';
import type { View } from '../../src/simulator/web/view.js';

const USER = '5215544440001';
let server: RunningServer | undefined;
const streams: AbortController[] = [];

afterEach(async () => {
  for (const c of streams.splice(0)) c.abort();
  await server?.close();
  server = undefined;
});

/** The simulator with a tick so slow that only a poke refreshes an open page. */
const slowTick: ServerExtension = (s, http) => {
  http.mount('/simulator', createSimulatorRouter({ sandbox: s.sandbox!, runtime: s.runtime, store: s.store, defaultSender: '15550000000', tickMs: 3_600_000 }));
};

async function post(path: string, body: unknown): Promise<Response> {
  const res = await fetch(`${server!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
  return res;
}

async function user(path: 'text' | 'tap', body: Record<string, unknown>): Promise<void> {
  await post(`/simulator/api/${path}`, { bot: 'support', user: USER, ...body });
  await server!.runtime.idle();
}

/** The page's stream: `until(test)` reads views until one passes (the test's timeout fails it if none comes). */
async function watch(): Promise<{ until: (test: (v: View) => boolean) => Promise<View> }> {
  const controller = new AbortController();
  streams.push(controller);
  const res = await fetch(`${server!.url}/simulator/api/events?bot=support&user=${USER}`, { signal: controller.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  const next = async (): Promise<View> => {
    for (;;) {
      const end = buffer.indexOf('\n\n');
      if (end >= 0) {
        const data = /^event: view\ndata: (.*)$/m.exec(buffer.slice(0, end))?.[1];
        buffer = buffer.slice(end + 2);
        if (data !== undefined) return JSON.parse(data) as View;
        continue;
      }
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended');
      buffer += value;
    }
  };
  return {
    until: async (test) => {
      for (;;) {
        const v = await next();
        if (test(v)) return v;
      }
    },
  };
}

it('pushes the claim, the agent’s message and the release to the customer’s page', { timeout: 30_000 }, async () => {
  const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const };
  server = await startServer({ bots: [support], config, extensions: [slowTick] });
  await user('text', { text: 'hi' });
  await user('tap', { kind: 'list', id: 'billing', title: 'A billing question' });
  await user('tap', { kind: 'button', id: 'agent', title: 'No, talk to a person' });
  await user('text', { text: 'I was charged twice.' });
  const page = await watch();
  const waiting = await page.until((v) => v.handoff?.state === 'waiting');
  expect(waiting.handoff?.text).toBe('a person takes over this chat (queue billing): waiting for an agent; it times out in 10m');
  const id = waiting.conversation!.id;

  // The refreshes the user's last message scheduled (within 300 ms of it) are over: from here only a poke shows a change.
  await new Promise((r) => setTimeout(r, 400));
  await post(`/agent/handoffs/${id}/claim`, { agent: 'ana' });
  const claimed = await page.until((v) => v.handoff?.state === 'claimed');
  expect(claimed.handoff).toMatchObject({ agent: 'ana', text: 'ana has this chat' });
  expect(claimed.timeline.at(-1)).toMatchObject({ kind: 'note', handoff: 'claimed', text: 'ana has this chat' });

  await post(`/agent/handoffs/${id}/messages`, { agent: 'ana', text: 'Hi, Ana here. Let me look at your bill.' });
  const wrote = await page.until((v) => v.timeline.some((i) => i.kind === 'bot' && i.agent === 'ana'));
  expect(wrote.timeline.at(-1)).toMatchObject({ kind: 'bot', agent: 'ana', byline: 'ana (agent, by SMS)', request: { message: 'Hi, Ana here. Let me look at your bill.' } });

  await post(`/agent/handoffs/${id}/release`, { agent: 'ana', note: 'refunded' });
  const back = await page.until((v) => v.handoff === null && v.timeline.some((i) => i.kind === 'bot' && i.messageKind === 'buttons' && JSON.stringify(i.request).includes('You are back')));
  const marks = (v: View) => v.timeline.flatMap((i) => (i.kind === 'note' && i.handoff !== undefined ? [i.text] : []));
  expect(marks(back)).toEqual(['a person takes over this chat (queue billing)', 'ana has this chat', 'ana handed the chat back to the bot']);

  // The page's first load (GET /api/state) says the same.
  const state = (await (await fetch(`${server.url}/simulator/api/state?bot=support&user=${USER}`)).json()) as View;
  expect(state.handoff).toBeNull();
  expect(marks(state)).toEqual(marks(back));
});
