/**
 * Input that can never be stored is never answered 5xx, on either store, and both stores answer
 * the same: ids with control characters or unpaired surrogates are a 400 naming the field; text
 * with NUL (kept inside JSON) is stored faithfully on both; a release note with NUL is a 400 on
 * both. Then a property test throws seeded random hostile Unicode into every field of every
 * webhook shape and every agents' API body, on SQLite and on the test PostgreSQL at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { freshDatabaseUrl } from '../support/postgres.js';
import { claimedHandoff, hostileString, postSigned, Random, request, BOT_NUMBER, serverOn, USER, type Answer } from './poison-support.js';

let servers: { name: string; s: RunningServer }[];
beforeAll(async () => {
  servers = [
    { name: 'sqlite', s: await serverOn(':memory:') },
    { name: 'postgres', s: await serverOn(await freshDatabaseUrl()) },
  ];
}, 60_000);
afterAll(async () => {
  for (const { s } of servers ?? []) await s.close();
});

const T = '1700000000';
const value = (v: Record<string, unknown>) => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: 'WABA-1',
      changes: [
        {
          field: 'messages',
          value: { messaging_product: 'whatsapp', metadata: { display_phone_number: BOT_NUMBER, phone_number_id: 'PN-1' }, contacts: [{ wa_id: USER, profile: { name: 'Ana' } }], ...v },
        },
      ],
    },
  ],
});
const message = (id: string, rest: Record<string, unknown>) => value({ messages: [{ from: USER, id, timestamp: T, ...rest }] });

/** Every shape the webhook takes, built around a unique id. */
const SHAPES: Record<string, (n: string, flowToken?: string) => { path: string; body: unknown }> = {
  text: (n) => ({ path: '/webhook', body: message(`wamid.t${n}`, { type: 'text', text: { body: 'hello' } }) }),
  button: (n) => ({
    path: '/webhook',
    body: message(`wamid.b${n}`, { type: 'interactive', context: { from: BOT_NUMBER, id: 'wamid.ctx' }, interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } } }),
  }),
  list: (n) => ({ path: '/webhook', body: message(`wamid.l${n}`, { type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'billing', title: 'Billing', description: 'd' } } }) }),
  flow: (n, token = 'flow-token-1') => ({
    path: '/webhook',
    body: message(`wamid.f${n}`, {
      type: 'interactive',
      interactive: { type: 'nfm_reply', nfm_reply: { name: 'flow', body: 'Sent', response_json: JSON.stringify({ flow_token: token, size: 'L' }) } },
    }),
  }),
  status: (n) => ({ path: '/webhook', body: value({ statuses: [{ id: `wamid.s${n}`, status: 'delivered', timestamp: T, recipient_id: USER }] }) }),
  failedStatus: (n) => ({
    path: '/webhook',
    body: value({ statuses: [{ id: `wamid.x${n}`, status: 'failed', timestamp: T, recipient_id: USER, errors: [{ code: 131047, title: 'Re-engagement' }] }] }),
  }),
  sms: (n) => ({ path: '/webhook/sms', body: { id: `sms-${n}`, from: USER, to: BOT_NUMBER, text: 'hello', timestamp: T } }),
};

/** The same request to both stores; their answers. */
async function both(send: (s: RunningServer) => Promise<Answer>): Promise<Answer[]> {
  const out: Answer[] = [];
  for (const { s } of servers) out.push(await send(s));
  return out;
}

const sign = (s: RunningServer, path: string, body: unknown) => postSigned(s, path, Buffer.from(JSON.stringify(body)));

describe('the battery’s reproductions, on both stores', () => {
  it.each([
    ['a message id', SHAPES['text']!('nul').body, 'entry[0].changes[0].value.messages[0].id', (b: any) => (b.entry[0].changes[0].value.messages[0].id = 'wamid.\u0000nul'), '/webhook'],
    ['a status id', SHAPES['status']!('nul').body, 'entry[0].changes[0].value.statuses[0].id', (b: any) => (b.entry[0].changes[0].value.statuses[0].id = 'wamid.\u0000nul'), '/webhook'],
    ['an SMS id', SHAPES['sms']!('nul').body, 'id', (b: any) => (b.id = 'sms-\u0000'), '/webhook/sms'],
    [
      'a button id (C1 control)',
      SHAPES['button']!('c1').body,
      'entry[0].changes[0].value.messages[0].interactive.button_reply.id',
      (b: any) => (b.entry[0].changes[0].value.messages[0].interactive.button_reply.id = 'yes\u0085'),
      '/webhook',
    ],
    [
      'a list row id (lone surrogate)',
      SHAPES['list']!('ls').body,
      'entry[0].changes[0].value.messages[0].interactive.list_reply.id',
      (b: any) => (b.entry[0].changes[0].value.messages[0].interactive.list_reply.id = 'row\ud800'),
      '/webhook',
    ],
  ])('a NUL or control character in %s is a 400 naming the field', async (_what, body, field, poison, path) => {
    poison(body);
    const answers = await both((s) => sign(s, path, body));
    for (const a of answers) {
      expect(a.status, a.text).toBe(400);
      const error = JSON.parse(a.text).error;
      expect(error.code).toBe('invalid_payload');
      expect(error.issues.map((i: { path: string }) => i.path)).toContain(field);
    }
  });

  it('a flow token with a NUL is a 400 naming response_json', async () => {
    const answers = await both((s) => sign(s, '/webhook', SHAPES['flow']!('tok', 'tok\u0000en').body));
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(a.text).toContain('response_json');
    }
  });

  it('text with NUL, unpaired surrogates and U+10FFFF is stored faithfully on both', async () => {
    const text = 'a\u0000b \ud800 \udfff c \udbff\udfff end';
    for (const { s } of servers) {
      const body = message('wamid.faithful', { type: 'text', text: { body: text } });
      const a = await sign(s, '/webhook', body);
      expect(a.status, a.text).toBe(200);
      let found: unknown;
      for (let id = 1; id < 200 && found === undefined; id++) {
        const row = await s.store.inbound(id);
        if (row?.providerId === 'wamid.faithful') found = row.event;
      }
      expect(found).toMatchObject({ type: 'text', text });
    }
  });

  it("an agent's release note with a NUL is a 400 naming the note, on both", async () => {
    const answers = await both(async (s) => {
      const id = await claimedHandoff(s, '5215512340077', 'ana');
      return request(s, 'POST', `/agent/handoffs/${id}/release`, JSON.stringify({ agent: 'ana', note: 'done\u0000' }));
    });
    for (const a of answers) {
      expect(a.status).toBe(400);
      expect(JSON.parse(a.text).error.field).toBe('note');
    }
  });
});

/** Every leaf of a JSON value, as a path. */
function leaves(v: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof v !== 'object' || v === null) return [path];
  return Object.entries(v).flatMap(([k, x]) => leaves(x, [...path, Array.isArray(v) ? Number(k) : k]));
}

function setAt(v: unknown, path: (string | number)[], x: unknown): void {
  let o = v as Record<string | number, unknown>;
  for (const p of path.slice(0, -1)) o = o[p] as Record<string | number, unknown>;
  o[path.at(-1)!] = x;
}

const percentEncoded = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

describe('random hostile Unicode in every field, on both stores', () => {
  const SEED = Number(process.env['COLLOQUY_POISON_SEED'] ?? 20261125);
  const CASES = 250;

  it(`no 5xx, and the same answer from both stores (seed ${SEED}, ${CASES} cases)`, async () => {
    const r = new Random(SEED);
    const holder = await Promise.all(servers.map(({ s }) => claimedHandoff(s, USER, 'ana')));
    const problems: string[] = [];
    const tally = new Map<number, number>();
    const check = (what: string, answers: Answer[]) => {
      const codes = answers.map((a) => a.status);
      tally.set(codes[0]!, (tally.get(codes[0]!) ?? 0) + 1);
      if (codes.some((c) => c >= 500) || codes[0] !== codes[1]) problems.push(`${what}: ${servers.map((x, i) => `${x.name} ${codes[i]} ${answers[i]!.text.slice(0, 200)}`).join(' | ')}`);
    };
    for (let n = 0; n < CASES; n++) {
      const seen = `case ${n} (seed ${SEED})`;
      if (r.next() < 0.75) {
        const shape = r.pick(Object.keys(SHAPES));
        const { path, body } = SHAPES[shape]!(`${n}`, r.next() < 0.2 ? hostileString(r) : undefined);
        const paths = leaves(body);
        const hits = 1 + r.int(3);
        for (let h = 0; h < hits; h++) setAt(body, r.pick(paths), r.next() < 0.9 ? hostileString(r) : r.pick([0, -1, 1e300, true, null, [], {}]));
        let raw = Buffer.from(JSON.stringify(body));
        if (r.next() < 0.05) raw = Buffer.concat([raw.subarray(0, raw.length - 3), Buffer.from([0xff, 0xc3, 0x28]), raw.subarray(raw.length - 3)]); // bytes that are not UTF-8
        check(`${seen} ${shape}`, await both((s) => postSigned(s, path, raw)));
        continue;
      }
      const kind = r.int(4);
      const agent = r.next() < 0.5 ? 'ana' : hostileString(r);
      if (kind === 0) {
        const text = hostileString(r);
        const bodies = [
          { agent, text },
          { agent, message: { kind: 'text', text } },
          { agent, message: { kind: 'buttons', body: text, buttons: [{ id: hostileString(r), title: hostileString(r) }] } },
        ];
        const body = JSON.stringify(r.pick(bodies));
        const key = r.next() < 0.5 ? { 'idempotency-key': `key-${r.int(5)}` } : {};
        check(`${seen} message`, await both((s) => request(s, 'POST', `/agent/handoffs/${holder[servers.findIndex((x) => x.s === s)]}/messages`, body, key)));
      } else if (kind === 1) {
        const body = JSON.stringify({ agent: agent === 'ana' ? 'bob' : agent });
        check(`${seen} claim`, await both((s) => request(s, 'POST', `/agent/handoffs/${holder[servers.findIndex((x) => x.s === s)]}/claim`, body)));
      } else if (kind === 2) {
        const body = JSON.stringify({ agent: agent === 'ana' ? 'bob' : agent, note: hostileString(r) });
        check(`${seen} release`, await both((s) => request(s, 'POST', `/agent/handoffs/${holder[servers.findIndex((x) => x.s === s)]}/release`, body)));
      } else {
        const q = `/agent/handoffs?queue=${percentEncoded(hostileString(r))}&bot=${percentEncoded(hostileString(r))}`;
        check(`${seen} queue`, await both((s) => request(s, 'GET', q)));
      }
    }
    // The holder releases with random notes, each on a new handoff.
    for (let n = 0; n < 6; n++) {
      const note = hostileString(r);
      const who = `52155123401${String(n).padStart(2, '0')}`;
      check(`release ${n} (seed ${SEED})`, await both(async (s) => request(s, 'POST', `/agent/handoffs/${await claimedHandoff(s, who, 'ana')}/release`, JSON.stringify({ agent: 'ana', note }))));
    }
    expect(problems, `replay with COLLOQUY_POISON_SEED=${SEED}`).toEqual([]);
    // The cases reached the stores: many were accepted (200, 202), many refused (400), none lost to a wrong number.
    expect((tally.get(200) ?? 0) + (tally.get(202) ?? 0)).toBeGreaterThan(CASES / 5);
    expect(tally.get(400) ?? 0).toBeGreaterThan(CASES / 5);
  }, 240_000);
});
