/** Shared helpers of the Cloud API mode's tests: posting to it, and a webhook on 127.0.0.1. */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, expect } from 'vitest';
import { SANDBOX_CLOUD_API_TOKEN, SANDBOX_PHONE_NUMBER_ID, type Sandbox } from '../../src/sandbox/index.js';
import { TO } from './helpers.js';

export { TO };

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

/** Posts a Cloud API body to `/cloud/{version}/{number}/messages`. */
export function postCloud(url: string, body: unknown, o: { token?: string | null; number?: string; version?: string } = {}): request.Test {
  const req = request(url).post(`/cloud/${o.version ?? 'v23.0'}/${o.number ?? SANDBOX_PHONE_NUMBER_ID}/messages`);
  if (o.token !== null) req.set('Authorization', `Bearer ${o.token ?? SANDBOX_CLOUD_API_TOKEN}`);
  return req.send(body as object);
}

/** A webhook on 127.0.0.1 that keeps every JSON body it receives. */
export async function webhook(): Promise<{ url: string; received: any[] }> {
  const received: any[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      res.end('ok');
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`, received };
}

/** The `value` of a webhook payload's one change. */
export function changeValue(payload: any): any {
  return payload.entry[0].changes[0].value;
}

/** The statuses the webhook received, as `[id, status]`. */
export function statusesIn(received: readonly any[]): any[] {
  return received.flatMap((p) => changeValue(p).statuses ?? []);
}

/** Expects a Graph API error answer with `code` whose details mention `path`. */
export function expectGraphError(res: request.Response, status: number, code: number, path?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toEqual({
    error: {
      message: expect.any(String),
      type: 'OAuthException',
      code,
      ...(res.body.error?.error_subcode !== undefined && { error_subcode: res.body.error.error_subcode }),
      error_data: { messaging_product: 'whatsapp', details: expect.any(String) },
      fbtrace_id: expect.any(String),
    },
  });
  if (path !== undefined) expect(res.body.error.error_data.details).toContain(path);
}

/** Opens the user's window with the sandbox's own number by having them write. */
export async function userWrites(sandbox: Sandbox, user = TO, to?: string): Promise<void> {
  const r = await sandbox.deliver.text(user, 'hi', to === undefined ? {} : { to });
  expect(r.ok).toBe(true);
}

export const text = (body = 'Hello there', to = TO) => ({ messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'text', text: { body } });

export const list = (rows = 3) => ({
  messaging_product: 'whatsapp',
  to: TO,
  type: 'interactive',
  interactive: {
    type: 'list',
    header: { type: 'text', text: 'Menu' },
    body: { text: 'Pick one' },
    footer: { text: 'Thanks' },
    action: { button: 'See options', sections: [{ title: 'Pizzas', rows: Array.from({ length: rows }, (_, i) => ({ id: `r${i}`, title: `Row ${i}`, description: `Row ${i} text` })) }] },
  },
});

export const buttons = (header?: unknown) => ({
  messaging_product: 'whatsapp',
  to: TO,
  type: 'interactive',
  interactive: {
    type: 'button',
    ...(header !== undefined && { header }),
    body: { text: 'Which size?' },
    action: {
      buttons: [
        { type: 'reply', reply: { id: 's', title: 'Small' } },
        { type: 'reply', reply: { id: 'l', title: 'Large' } },
      ],
    },
  },
});

export const flow = (parameters: Record<string, unknown> = {}) => ({
  messaging_product: 'whatsapp',
  to: TO,
  type: 'interactive',
  interactive: {
    type: 'flow',
    body: { text: 'Book a table' },
    action: {
      name: 'flow',
      parameters: { flow_message_version: '3', flow_token: 'tok-1', flow_id: '123456', flow_cta: 'Book', flow_action: 'navigate', flow_action_payload: { screen: 'BOOK' }, ...parameters },
    },
  },
});

export const template = (name = 'colloquy_reopen', components: unknown[] | null = [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }] }], language = 'en', to = TO) => ({
  messaging_product: 'whatsapp',
  to,
  type: 'template',
  template: { name, language: { code: language }, ...(components !== null && { components }) },
});
