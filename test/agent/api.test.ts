/**
 * The agents' HTTP API against the real server wiring (sandbox provider, SQLite, runtime) with the
 * support bot: queue, claims, messages (idempotent), release, transcript, and the bad-input rules.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { verifyHandoffSignature } from '../../src/agent/signature.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { eventually } from '../support/eventually.js';
import { rowsAt } from '../support/rows.js';
import { tempDir } from '../support/temp.js';
import { api, HOOK_SECRET, receiver, sentTo, serve, TOKEN, USER, user, walkToHandoff } from './helpers.js';

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A SQLite file `name` in a folder of its own, removed after the test. */
function tempFile(prefix: string, name: string): string {
  const t = tempDir(prefix);
  cleanup.push(() => t.remove());
  return t.path(name);
}

async function start(o: Parameters<typeof serve>[0] = {}): Promise<RunningServer> {
  const { server } = await serve(o);
  cleanup.push(() => server.close());
  return server;
}

describe("agents' API", () => {
  it('queue → two agents claim (one 409) → idempotent message → user writes (bot silent) → release → the bot resumes', async () => {
    const s = await start();
    expect((await api(s, 'GET', '/agent/handoffs')).json).toEqual({ handoffs: [] });
    const id = await walkToHandoff(s);

    const queue = await api(s, 'GET', '/agent/handoffs');
    expect(queue.status).toBe(200);
    expect(queue.json.handoffs).toHaveLength(1);
    expect(queue.json.handoffs[0]).toMatchObject({
      conversationId: id,
      bot: 'support',
      user: USER,
      reason: 'A billing question: I was charged twice.',
      queue: 'billing',
      status: 'waiting',
      agent: null,
    });
    expect(queue.json.handoffs[0].lastMessages.at(-1)).toMatchObject({ from: 'bot', text: expect.stringContaining('a person will take over') });

    expect((await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' })).status).toBe(200);
    const taken = await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'bob' });
    expect(taken.status).toBe(409);
    expect(taken.json.error.message).toContain('agent "ana" holds it');
    expect((await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' })).status).toBe(200); // the holder again: no change
    expect((await api(s, 'GET', '/agent/handoffs')).json.handoffs[0]).toMatchObject({ status: 'claimed', agent: 'ana' });
    expect((await api(s, 'GET', '/agent/handoffs?queue=billing&status=claimed&bot=support')).json.handoffs).toHaveLength(1);
    expect((await api(s, 'GET', '/agent/handoffs?queue=wifi')).json.handoffs).toEqual([]);
    expect((await api(s, 'GET', '/agent/handoffs?status=waiting')).json.handoffs).toEqual([]);
    expect(await api(s, 'GET', '/agent/handoffs?status=lost')).toMatchObject({ status: 400, json: { error: { field: 'status' } } });

    const before = s.sandbox!.messages.length;
    const first = await api(s, 'POST', `/agent/handoffs/${id}/messages`, { text: 'Hi, Ana here. I see the double charge.' }, { 'x-agent': 'ana', 'idempotency-key': 'k-1' });
    const again = await api(s, 'POST', `/agent/handoffs/${id}/messages`, { text: 'Hi, Ana here. I see the double charge.' }, { 'x-agent': 'ana', 'idempotency-key': 'k-1' });
    expect(first).toMatchObject({ status: 202, json: { duplicate: false } });
    expect(again).toMatchObject({ status: 200, json: { duplicate: true, outboxId: first.json.outboxId } });
    await s.runtime.idle();
    expect(s.sandbox!.messages.slice(before).map((m) => (m.channel === 'sms' ? m.text : m.channel))).toEqual(['Hi, Ana here. I see the double charge.']);

    await user(s, { type: 'text', text: 'Thank you!' });
    await user(s, { type: 'reply.solved', id: 'solved', title: 'Yes, solved', via: 'button' }); // a stale tap: the agent's too
    expect(s.sandbox!.messages.length).toBe(before + 1); // the bot stayed silent
    expect((await s.store.activeConversation({ botId: 'support', user: USER }))!.state).toBe('handoff');

    const released = await api(s, 'POST', `/agent/handoffs/${id}/release`, { agent: 'ana', note: 'refunded' });
    expect(released).toMatchObject({ status: 200, json: { handoff: { state: 'ended', endedBy: 'ana', note: 'refunded' } } });
    await s.runtime.idle();
    const conv = (await s.store.activeConversation({ botId: 'support', user: USER }))!;
    expect(conv.state).toBe('anythingElse');
    expect(s.sandbox!.messages.at(-1)).toMatchObject({ channel: 'interactive', request: { replyButtons: { body: expect.stringContaining('anything else') } } });
    expect((await api(s, 'GET', '/agent/handoffs')).json.handoffs).toEqual([]);

    const t = await api(s, 'GET', `/agent/conversations/${id}`);
    expect(t.status).toBe(200);
    const lines = t.json.transcript.map((l: { from: string; agent?: string; text: string }) => `${l.from}${l.agent ? `(${l.agent})` : ''}: ${l.text}`);
    expect(lines.slice(-6)).toEqual([
      'bot: Thanks. Ticket ' + (lines.at(-6) as string).slice('bot: Thanks. Ticket '.length),
      'agent(ana): Hi, Ana here. I see the double charge.',
      'user: Thank you!',
      'user: Yes, solved',
      'system: released by ana: refunded',
      'bot: You are back with the assistant. Is there anything else we can help with?',
    ]);

    await user(s, { type: 'reply.done', id: 'done', title: 'No, thank you', via: 'button' });
    expect((await s.store.conversations({ botId: 'support', user: USER })).at(-1)!.state).toBe('resolved');

    const metrics = await (await fetch(`${s.url}/metrics`)).text();
    for (const line of [
      'colloquy_handoffs_started_total{bot="support",queue="billing"} 1',
      'colloquy_handoffs_claimed_total{bot="support"} 1',
      'colloquy_handoffs_ended_total{bot="support"} 1',
      'colloquy_handoff_wait_seconds_count{bot="support"} 1',
      'colloquy_handoff_messages_total{bot="support",from="agent"} 1',
      'colloquy_handoff_messages_total{bot="support",from="user"} 2',
    ])
      expect(metrics).toContain(line);
  });

  it('refuses bad input with 400/404/409 and sends nothing', async () => {
    const s = await start();
    const id = await walkToHandoff(s);
    const sent = s.sandbox!.messages.length;
    const rows = () => (s.store as unknown as { db: { prepare(q: string): { get(): { n: number } } } }).db.prepare('SELECT COUNT(*) AS n FROM outbox').get().n;
    const outbox = rows();

    expect(await api(s, 'POST', '/agent/handoffs/999/claim', { agent: 'ana' })).toMatchObject({ status: 404 });
    expect(await api(s, 'POST', '/agent/handoffs/abc/messages', { agent: 'ana', text: 'x' })).toMatchObject({ status: 404 });
    expect(await api(s, 'GET', '/agent/conversations/999')).toMatchObject({ status: 404 });
    expect(await api(s, 'POST', '/agent/handoffs/999/messages', { agent: 'ana', text: 'hello' })).toMatchObject({ status: 404 });
    // Not claimed yet, then claimed by someone else.
    expect(await api(s, 'POST', `/agent/handoffs/${id}/messages`, { agent: 'ana', text: 'hello' })).toMatchObject({ status: 409 });
    await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'bob' });
    expect(await api(s, 'POST', `/agent/handoffs/${id}/messages`, { agent: 'ana', text: 'hello' })).toMatchObject({ status: 409 });
    expect(await api(s, 'POST', `/agent/handoffs/${id}/release`, { agent: 'ana' })).toMatchObject({ status: 409 });

    const bad = async (body: unknown, field: string, headers: Record<string, string> = {}) => {
      const r = await api(s, 'POST', `/agent/handoffs/${id}/messages`, body, { 'x-agent': 'bob', ...headers });
      expect(r.status, JSON.stringify(r.json)).toBe(400);
      expect(r.json.error.field).toBe(field);
      expect(r.json.error.message).toContain(field);
      expect(r.json.error.message).not.toMatch(/is not a function|Cannot read|undefined/);
    };
    await bad({ text: '' }, 'text');
    await bad({ text: 'x'.repeat(5000) }, 'text');
    await bad({}, 'text');
    await bad({ text: 'a', message: { kind: 'text', text: 'b' } }, 'message');
    await bad({ message: { kind: 'video' } }, 'message.kind');
    await bad({ message: { kind: 'buttons', body: 'Pick one', buttons: [{ id: 'a', title: 'x'.repeat(30) }] } }, 'message.replyButtons.buttons[0].title');
    // A value of the wrong type is named by its field, in our words (never the runtime's "… is not a function").
    await bad({ message: { kind: 'list', body: 'Pick', button: 'Open', rows: 'nope' } }, 'message.rows');
    await bad({ message: { kind: 'list', body: 'Pick', button: 'Open', sections: [{ rows: [null] }] } }, 'message.sections[0].rows[0]');
    await bad({ message: { kind: 'buttons', body: 'Pick one', buttons: { id: 'a' } } }, 'message.buttons');
    await bad({ message: { kind: 'buttons', body: 'Pick one', buttons: [{ id: 'a', title: 'A' }], document: 'x' } }, 'message.document');
    await bad({ text: 'hi', colour: 'red' }, 'colour');
    await bad({ text: 'hi' }, 'Idempotency-Key', { 'idempotency-key': 'has space' });
    await bad('{"text": ', 'body');
    const noAgent = await api(s, 'POST', `/agent/handoffs/${id}/messages`, { text: 'hi' });
    expect(noAgent).toMatchObject({ status: 400, json: { error: { field: 'agent' } } });

    await s.runtime.idle();
    expect(s.sandbox!.messages.length).toBe(sent);
    expect(rows()).toBe(outbox);

    // A list in the builders' shape is fine.
    const ok = await api(
      s,
      'POST',
      `/agent/handoffs/${id}/messages`,
      {
        message: {
          kind: 'buttons',
          body: 'Shall I refund it?',
          buttons: [
            { id: 'yes', title: 'Yes' },
            { id: 'no', title: 'No' },
          ],
        },
      },
      { 'x-agent': 'bob' },
    );
    expect(ok.status).toBe(202);
    await s.runtime.idle();
    expect(s.sandbox!.messages.at(-1)).toMatchObject({ channel: 'interactive', request: { replyButtons: { body: 'Shall I refund it?' } } });
  });

  it('answers 401 without the token, or with a wrong one; open on loopback only with the sandbox and no token set', async () => {
    const s = await start();
    for (const headers of [{ authorization: '' }, { authorization: 'Bearer wrong-token-wrong-token' }, { authorization: `Basic ${TOKEN}` }]) {
      const r = await api(s, 'GET', '/agent/handoffs', undefined, headers);
      expect(r.status).toBe(401);
      expect(r.json.error.message).toContain('Bearer');
    }
    const open = await start({ token: null });
    expect((await api(open, 'GET', '/agent/handoffs', undefined, { authorization: '' })).status).toBe(200);
  });

  it('notifies the helpdesk of every handoff event, signed, each with an id', async () => {
    const hook = await receiver();
    cleanup.push(() => hook.close());
    const s = await start({ hook: hook.url });
    const id = await walkToHandoff(s);
    await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' });
    await user(s, { type: 'text', text: 'Are you there?' });
    await api(s, 'POST', `/agent/handoffs/${id}/release`, { agent: 'ana', note: 'done' });
    await s.runtime.idle();
    await s.runtime.idle();
    expect(hook.got.map((g) => g.body.type)).toEqual(['handoff.started', 'handoff.claimed', 'handoff.message', 'handoff.ended']);
    for (const g of hook.got) {
      expect(verifyHandoffSignature(g.raw, g.headers['x-colloquy-signature-256'] as string, HOOK_SECRET)).toBe(true);
      expect(g.headers['x-colloquy-event-id']).toBe(g.body.id);
      expect(g.body.handoff).toMatchObject({ conversationId: id, bot: 'support', user: USER, queue: 'billing' });
    }
    expect(new Set(hook.got.map((g) => g.body.id)).size).toBe(4);
    expect(hook.got[2]!.body.message).toMatchObject({ event: { type: 'text', text: 'Are you there?' }, source: 'whatsapp' });
    expect(hook.got[3]!.body.handoff).toMatchObject({ state: 'ended', endedBy: 'ana', note: 'done' });
    expect(verifyHandoffSignature(hook.got[0]!.raw, hook.got[0]!.headers['x-colloquy-signature-256'] as string, 'another-secret-0000')).toBe(false);
  });

  it('delivers events another process queued and left behind, with no change in this process', async () => {
    const hook = await receiver();
    cleanup.push(() => hook.close());
    const gone = await receiver();
    const goneUrl = gone.url;
    await gone.close(); // the first process's helpdesk is unreachable while it queues its events
    const db = tempFile('colloquy-connector-', 'shared.db');
    const survivor = await serve({ db, hook: hook.url });
    cleanup.push(() => survivor.server.close());
    const first = await serve({ db, hook: goneUrl });
    await walkToHandoff(first.server);
    await first.server.runtime.idle();
    await first.server.close(); // its events stay queued in the database
    expect(hook.got).toEqual([]);
    survivor.clock.advance(60_000); // past the refused event's retry time (2 s), and a poll; before the handoff's timeout
    await eventually(() => expect(hook.got.map((g) => g.body.type)).toEqual(['handoff.started']), { what: 'the queued event delivered' });
  });

  it.each(['sqlite', 'postgres'] as const)('an event whose deliverer stopped renewing its claim is taken over and delivered once; the late answer records nothing (%s)', async (engine) => {
    const hook = await receiver();
    const stuck = await receiver();
    stuck.holding = true; // the first process's POST hangs, as if the process had frozen mid-delivery
    cleanup.push(() => hook.close());
    cleanup.push(() => stuck.close());
    let db: string;
    if (engine === 'postgres') db = await freshDatabaseUrl();
    else db = tempFile('colloquy-connector-', 'shared.db');
    const first = await serve({ db, hook: stuck.url });
    cleanup.push(() => first.server.close());
    // The walk's last message opens the handoff; its event's POST then hangs (no waiting for it here).
    await user(first.server, { type: 'text', text: 'hi' });
    await user(first.server, { type: 'reply.billing', id: 'billing', title: 'A billing question', via: 'list' });
    await user(first.server, { type: 'reply.agent', id: 'agent', title: 'No, talk to a person', via: 'button' });
    await first.server.runtime.receive({ botId: 'support', user: USER, source: 'whatsapp', event: { type: 'text', text: 'I was charged twice.' } });
    await eventually(() => expect(stuck.waiting()).toBe(1), { what: "the first process's POST held" });
    // It stops renewing (its clock stands still) and its claim lapses: another process takes the event.
    await first.server.store.renew(first.server.runtime.owner, 0);
    const survivor = await serve({ db, hook: hook.url });
    cleanup.push(() => survivor.server.close());
    await eventually(() => expect(hook.got.map((g) => g.body.type)).toEqual(['handoff.started']), { what: 'the event taken over and delivered' });
    await survivor.server.runtime.idle();
    stuck.letGo(); // the first delivery's answer arrives late: its claim no longer holds the event
    await first.server.runtime.idle();
    expect(await rowsAt(db, 'SELECT type, state, attempts, owner, claim FROM handoff_events')).toEqual([{ type: 'handoff.started', state: 'sent', attempts: 2, owner: null, claim: null }]);
    expect(hook.got).toHaveLength(1);
  });

  it.each(['sqlite', 'postgres'] as const)('retries an event the helpdesk refused, later, with the same id (%s)', async (engine) => {
    const hook = await receiver();
    cleanup.push(() => hook.close());
    // On PostgreSQL the retry time goes into a BIGINT: a jittered delay with a fraction of a
    // millisecond could not be recorded, and the event waited for its lease instead.
    const { server: s, clock } = await serve({ hook: hook.url, ...(engine === 'postgres' && { db: await freshDatabaseUrl() }) });
    cleanup.push(() => s.close());
    hook.failNext = 1;
    await walkToHandoff(s);
    await s.runtime.idle();
    expect(hook.got).toHaveLength(0);
    clock.advance(10_000);
    await s.runtime.idle();
    expect(hook.got.map((g) => g.body.type)).toEqual(['handoff.started']);
    expect(s.metrics.value('colloquy_handoff_events_total', { type: 'handoff.started', outcome: 'retry' })).toBe(1);
  });

  it('times out an unclaimed handoff after 10 minutes: the bot promises a call back', async () => {
    const hook = await receiver();
    cleanup.push(() => hook.close());
    const { server: s, clock } = await serve({ hook: hook.url });
    cleanup.push(() => s.close());
    const id = await walkToHandoff(s);
    clock.advance(9 * 60_000);
    await s.runtime.poke();
    await s.runtime.idle();
    expect((await s.store.openHandoff(id))?.state).toBe('waiting');
    clock.advance(60_000);
    await s.runtime.poke();
    await s.runtime.idle();
    await s.runtime.idle();
    expect(await s.store.openHandoff(id)).toBeUndefined();
    expect((await s.store.conversation(id))!.state).toBe('callback');
    expect(sentTo(s).at(-1)).toContain('An agent will call this number within 2 hours');
    expect(hook.got.map((g) => g.body.type)).toEqual(['handoff.started', 'handoff.timeout']);
    expect(await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' })).toMatchObject({ status: 409 });
    expect(s.metrics.value('colloquy_handoffs_timed_out_total', { bot: 'support' })).toBe(1);
  });

  it('a claim before the timeout cancels it', async () => {
    const { server: s, clock } = await serve();
    cleanup.push(() => s.close());
    const id = await walkToHandoff(s);
    await api(s, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' });
    clock.advance(29 * 60_000); // well past the handoff's timeout (10 minutes), before the claim's idle time (30)
    await s.runtime.poke();
    await s.runtime.idle();
    expect(await s.store.openHandoff(id)).toMatchObject({ state: 'claimed', agent: 'ana' });
    expect((await s.store.conversation(id))!.state).toBe('handoff');
  });

  it('survives a restart: the handoff, its claim and its messages are in the database', async () => {
    const db = tempFile('colloquy-handoff-', 'c.db');
    const first = await serve({ db });
    const id = await walkToHandoff(first.server);
    await api(first.server, 'POST', `/agent/handoffs/${id}/claim`, { agent: 'ana' });
    await first.server.close();

    const { server: s } = await serve({ db, clock: first.clock });
    cleanup.push(() => s.close());
    expect((await api(s, 'GET', '/agent/handoffs')).json.handoffs[0]).toMatchObject({ conversationId: id, status: 'claimed', agent: 'ana' });
    const before = s.sandbox!.messages.length;
    await user(s, { type: 'text', text: 'still there?' });
    expect(s.sandbox!.messages.length).toBe(before);
    expect((await api(s, 'POST', `/agent/handoffs/${id}/messages`, { agent: 'ana', text: 'Yes!' }, { 'idempotency-key': 'a' })).status).toBe(202);
    expect((await api(s, 'POST', `/agent/handoffs/${id}/release`, { agent: 'ana' })).status).toBe(200);
    await s.runtime.idle();
    expect((await s.store.conversation(id))!.state).toBe('anythingElse');
  });

  it('an unclaimed handoff still times out after a restart (its timer is in the database)', async () => {
    const db = tempFile('colloquy-handoff-', 'c.db');
    const first = await serve({ db });
    const id = await walkToHandoff(first.server);
    await first.server.close();
    first.clock.advance(11 * 60_000);
    const { server: s } = await serve({ db, clock: first.clock });
    cleanup.push(() => s.close());
    await s.runtime.idle();
    expect((await s.store.conversation(id))!.state).toBe('callback');
    expect(await s.store.handoffs(id)).toMatchObject([{ state: 'timeout', endedBy: 'timeout' }]);
  });
});
