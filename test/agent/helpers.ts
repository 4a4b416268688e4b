/** A server with the support bot, the agents' API and a helpdesk receiver, all on 127.0.0.1. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../../src/config.js';
import { ManualClock } from '../../src/conversation/clock.js';
import { startServer, type RunningServer } from '../../src/server.js';
import type { HandoffEventBody } from '../../src/store/handoff-payload.js';
import support from '../../bots/support.js';

export const TOKEN = 'agent-token-0123456789';
export const HOOK_SECRET = 'hook-secret-0123456789';
export const USER = '5215512340001';

/** What the helpdesk receiver got. */
export interface Received {
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: HandoffEventBody;
}

/** A helpdesk on loopback that records every POST; `failNext` answers 503 that many times first. */
export async function receiver(): Promise<{ url: string; got: Received[]; failNext: number; holding: boolean; letGo(): void; waiting(): number; close(): Promise<void> }> {
  const got: Received[] = [];
  const state = { failNext: 0, holding: false };
  const held: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (state.holding) {
        held.push(() => res.end('ok'));
        return;
      }
      if (state.failNext > 0) {
        state.failNext--;
        res.statusCode = 503;
        res.end();
        return;
      }
      const raw = Buffer.concat(chunks).toString('utf8');
      got.push({ raw, headers: req.headers, body: JSON.parse(raw) as HandoffEventBody });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  return {
    url,
    got,
    get failNext() {
      return state.failNext;
    },
    set failNext(n: number) {
      state.failNext = n;
    },
    /** While true, requests are left unanswered until `letGo()`. */
    get holding() {
      return state.holding;
    },
    set holding(h: boolean) {
      state.holding = h;
    },
    letGo: () => {
      state.holding = false;
      for (const answer of held.splice(0)) answer();
    },
    waiting: () => held.length,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Starts `colloquy serve`'s wiring with the support bot (sandbox provider, manual clock). */
export async function serve(o: { db?: string; hook?: string; token?: string | null; clock?: ManualClock } = {}): Promise<{ server: RunningServer; clock: ManualClock }> {
  const clock = o.clock ?? new ManualClock();
  const config: Config = {
    ...loadConfig({}),
    port: 0,
    db: o.db ?? ':memory:',
    logLevel: 'silent',
    ...(o.token !== null && { agentToken: o.token ?? TOKEN }),
    ...(o.hook !== undefined && { handoffWebhook: { url: o.hook, secret: HOOK_SECRET } }),
  };
  const server = await startServer({ bots: [support], config, clock });
  return { server, clock };
}

/** Sends the user's message and waits for the bot. */
export async function user(server: RunningServer, event: { type: string; [k: string]: unknown }, who = USER): Promise<void> {
  await server.runtime.receive({ botId: 'support', user: who, source: 'whatsapp', event });
  await server.runtime.idle();
}

/** Walks the support bot to its handoff; returns the conversation id. */
export async function walkToHandoff(server: RunningServer, who = USER): Promise<number> {
  await user(server, { type: 'text', text: 'hi' }, who);
  await user(server, { type: 'reply.billing', id: 'billing', title: 'A billing question', via: 'list' }, who);
  await user(server, { type: 'reply.agent', id: 'agent', title: 'No, talk to a person', via: 'button' }, who);
  await user(server, { type: 'text', text: 'I was charged twice.' }, who);
  const conv = await server.store.activeConversation({ botId: 'support', user: who });
  if (conv?.state !== 'handoff') throw new Error(`expected the handoff state, got ${conv?.state}`);
  return conv.id;
}

/** Calls the agents' API. */
export async function api(server: RunningServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
    ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** What the sandbox accepted for the user, as kinds and texts. */
export function sentTo(server: RunningServer, who = USER): string[] {
  return server.sandbox!.messages.filter((m) => m.to === who).map((m) => (m.channel === 'sms' ? `sms:${m.text}` : `interactive:${JSON.stringify(m.request).slice(0, 60)}`));
}
