/**
 * A helpdesk connector: receives Colloquy's handoff events (COLLOQUY_HANDOFF_WEBHOOK_URL), checks
 * their signature over the raw body, drops redeliveries by event id, and mirrors each handoff as a
 * ticket in a helpdesk's API (a pretend one here, on 127.0.0.1). Then it plays one handoff of the
 * support bot end to end: the customer asks for a person, writes while waiting, an agent claims,
 * answers and releases it over the agents' HTTP API, and the bot takes over again.
 *
 *   node --conditions=colloquy-source --import tsx examples/helpdesk-connector.ts
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { HANDOFF_SIGNATURE_HEADER, loadConfig, startServer, verifyHandoffSignature, type HandoffEventBody } from 'colloquy/server';
import support from '../bots/support.js';

const SECRET = 'connector-secret-0123456789'; // COLLOQUY_HANDOFF_WEBHOOK_SECRET
const TOKEN = 'agents-token-0123456789'; // COLLOQUY_AGENT_TOKEN
const USER = '5215512345678';

async function listen(app: express.Express): Promise<{ url: string; close: () => void }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

// ── The helpdesk's own API (pretend): tickets with notes. ───────────────────────────────────
interface Ticket {
  id: number;
  customer: string;
  subject: string;
  queue: string;
  status: 'open' | 'pending' | 'solved';
  notes: string[];
}
const tickets: Ticket[] = [];
const helpdeskApp = express().use(express.json());
helpdeskApp.post('/api/tickets', (req, res) => {
  const t: Ticket = { id: tickets.length + 1, status: 'open', notes: [], ...req.body };
  tickets.push(t);
  console.log(`helpdesk: ticket #${t.id} opened for +${t.customer} in queue ${t.queue}: ${JSON.stringify(t.subject)}`);
  res.status(201).json(t);
});
helpdeskApp.post('/api/tickets/:id/notes', (req, res) => {
  const t = tickets[Number(req.params['id']) - 1]!;
  t.notes.push(req.body.text);
  console.log(`helpdesk: ticket #${t.id} note: ${req.body.text}`);
  res.status(201).json(t);
});
helpdeskApp.patch('/api/tickets/:id', (req, res) => {
  const t = tickets[Number(req.params['id']) - 1]!;
  t.status = req.body.status;
  console.log(`helpdesk: ticket #${t.id} ${t.status}${req.body.comment ? `: ${req.body.comment}` : ''}`);
  res.json(t);
});
const helpdesk = await listen(helpdeskApp);

// ── The connector: Colloquy's events → the helpdesk's API. ──────────────────────────────────
const seen = new Set<string>(); // event ids already handled (a database table in production)
const ticketOf = new Map<number, number>(); // handoff id → ticket id
const connectorApp = express();
// The raw body: the signature is over the exact bytes received.
connectorApp.post('/colloquy-events', express.raw({ type: 'application/json' }), async (req, res) => {
  const raw = req.body as Buffer;
  if (!verifyHandoffSignature(raw, req.get(HANDOFF_SIGNATURE_HEADER), SECRET)) return void res.status(401).send('bad signature');
  const e = JSON.parse(raw.toString('utf8')) as HandoffEventBody;
  if (seen.has(e.id)) return void res.status(200).send('already handled');
  console.log(`connector ← ${e.type} ${e.id.slice(0, 8)}… (signature ok)`);
  const call = (method: string, path: string, body: unknown) => fetch(`${helpdesk.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const h = e.handoff;
  if (e.type === 'handoff.started') {
    const t = (await (await call('POST', '/api/tickets', { customer: h.user, subject: h.reason ?? '(no reason)', queue: h.queue ?? 'general' })).json()) as Ticket;
    ticketOf.set(h.id, t.id);
  } else if (e.type === 'handoff.claimed') {
    await call('PATCH', `/api/tickets/${ticketOf.get(h.id)}`, { status: 'pending', comment: `taken by ${h.agent}` });
  } else if (e.type === 'handoff.message') {
    const ev = e.message?.event as { type: string; text?: string; title?: string };
    await call('POST', `/api/tickets/${ticketOf.get(h.id)}/notes`, { text: `customer: ${ev.text ?? ev.title ?? ev.type}` });
  } else if (e.type === 'handoff.ended' || e.type === 'handoff.timeout') {
    const comment = e.type === 'handoff.timeout' ? 'nobody claimed it in time' : `by ${h.endedBy}${h.note ? ` (${h.note})` : ''}`;
    await call('PATCH', `/api/tickets/${ticketOf.get(h.id)}`, { status: 'solved', comment });
  }
  seen.add(e.id); // only once it is done: a failure answers 5xx and Colloquy retries the same event
  res.status(200).send('ok');
});
const connector = await listen(connectorApp);

// ── Colloquy with the support bot, its connector pointed at ours. ──────────────────────────
const config = { ...loadConfig({}), port: 0, db: ':memory:', logLevel: 'silent' as const, agentToken: TOKEN, handoffWebhook: { url: `${connector.url}/colloquy-events`, secret: SECRET } };
const colloquy = await startServer({ bots: [support], config });
const customer = async (event: { type: string; [k: string]: unknown }) => {
  await colloquy.runtime.receive({ botId: 'support', user: USER, source: 'whatsapp', event });
  await colloquy.runtime.idle();
};
const agentApi = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(`${colloquy.url}/agent/handoffs/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  console.log(`agent API POST ${path.replace(/^\d+\//, '…/')} → ${res.status}`);
  return res;
};

await customer({ type: 'text', text: 'hi' });
await customer({ type: 'reply.billing', id: 'billing', title: 'A billing question', via: 'list' });
await customer({ type: 'reply.agent', id: 'agent', title: 'No, talk to a person', via: 'button' });
await customer({ type: 'text', text: 'I was charged twice.' });
const id = (await colloquy.store.activeConversation({ botId: 'support', user: USER }))!.id;
await customer({ type: 'text', text: 'Is anyone there?' });
await agentApi(`${id}/claim`, { agent: 'ana' });
await agentApi(`${id}/messages`, { agent: 'ana', text: 'Hi, Ana here: I have refunded the second charge.' }, { 'idempotency-key': 'reply-1' });
await agentApi(`${id}/release`, { agent: 'ana', note: 'refunded' });
await colloquy.runtime.idle(); // the worker has delivered the helpdesk events too

const forged = await fetch(`${connector.url}/colloquy-events`, {
  method: 'POST',
  headers: { 'content-type': 'application/json', [HANDOFF_SIGNATURE_HEADER]: 'sha256=00' },
  body: '{"type":"handoff.ended"}',
});
console.log(`a forged event → ${forged.status}`);

for (const entry of await colloquy.runtime.transcript({ botId: 'support', user: USER })) {
  if (entry.direction !== 'out') continue;
  const m = entry.record.message as { kind: string; text?: string; replyButtons?: { body: string }; listMessages?: { body: string } };
  console.log(`${entry.record.agent ?? 'bot'} → +${USER}: ${m.text ?? m.replyButtons?.body ?? m.listMessages?.body}`);
}
console.log(`tickets: ${JSON.stringify(tickets.map((t) => ({ id: t.id, status: t.status, notes: t.notes.length })))}`);
await colloquy.close();
connector.close();
helpdesk.close();
