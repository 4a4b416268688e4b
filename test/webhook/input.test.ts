/** The handshake, and every kind of bad input: 4xx with a reason, nothing stored, never a 5xx. */
import { describe, expect, it } from 'vitest';
import { buttonReplyMessage, flowReplyMessage, imageMessage, inboundSms, textMessage, webhookPayload, type CloudMessage } from '../../src/sandbox/index.js';
import orderBot from '../fixtures/order-bot.js';
import { jsonDepth, MAX_JSON_DEPTH } from '../../src/webhook/body.js';
import { USER, codeOf, stack, type Answer } from './helpers.js';

const envelope = (...messages: CloudMessage[]) => webhookPayload({ messages });

function refused(r: Answer, status: number, code: string): void {
  expect(r.status, r.text).toBe(status);
  expect(codeOf(r)).toBe(code);
  expect((r.json as { error: { message: string } }).error.message.length).toBeGreaterThan(5);
  expect(r.text).not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack trace
}

describe('GET /webhook handshake', () => {
  it('answers the challenge as text when mode and token match', async () => {
    const s = await stack({ bots: [orderBot], verifyToken: 'let-me-in' });
    const res = await fetch(`${s.url}/webhook?hub.mode=subscribe&hub.verify_token=let-me-in&hub.challenge=1158201444`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await res.text()).toBe('1158201444');
  });

  it('refuses a wrong token, a wrong mode, or no token with 403', async () => {
    const s = await stack({ bots: [orderBot], verifyToken: 'let-me-in' });
    for (const q of ['hub.mode=subscribe&hub.verify_token=let-me-out&hub.challenge=1', 'hub.mode=unsubscribe&hub.verify_token=let-me-in&hub.challenge=1', 'hub.mode=subscribe&hub.challenge=1', '']) {
      const res = await fetch(`${s.url}/webhook?${q}`);
      expect(res.status, q).toBe(403);
      expect(res.headers.get('content-type'), q).toMatch(/^application\/json/); // a JSON error, like every other refusal
      expect(await res.text()).not.toContain('let-me-in');
    }
  });

  it('refuses every handshake when no verify token is configured', async () => {
    const s = await stack({ bots: [orderBot] });
    const res = await fetch(`${s.url}/webhook?hub.mode=subscribe&hub.verify_token=&hub.challenge=1`);
    expect(res.status).toBe(403);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('handshake_disabled');
  });
});

describe('bad input', () => {
  it('refuses malformed JSON and an empty body with 400', async () => {
    const s = await stack({ bots: [orderBot] });
    refused(await s.post('/webhook', '{"object": "whatsapp_business_account", "entry": ['), 400, 'invalid_json');
    refused(await s.post('/webhook', ''), 400, 'invalid_json');
    refused(await s.post('/webhook/sms', 'not json'), 400, 'invalid_json');
    expect(s.count('inbox')).toBe(0);
  });

  it('refuses wrong types and missing fields with 400 naming each problem', async () => {
    const s = await stack({ bots: [orderBot] });
    const bad: unknown[] = [
      { object: 'whatsapp_business_account', entry: 'nope' },
      { entry: [] },
      [1, 2, 3],
      envelope({ ...textMessage({ from: USER, text: 'x' }), text: { body: 42 } }),
      envelope({ ...textMessage({ from: USER, text: 'x' }), from: 'not-a-number' }),
      envelope({ ...buttonReplyMessage({ from: USER, buttonId: 'a', title: 'A' }), interactive: { type: 'button_reply' } }),
      webhookPayload({ statuses: [{ id: 'wamid.1', status: 'read', timestamp: 'yesterday', recipient_id: USER } as never] }),
    ];
    for (const body of bad) refused(await s.post('/webhook', body), 400, 'invalid_payload');
    const r = await s.post('/webhook', envelope({ ...textMessage({ from: USER, text: 'x' }), text: { body: 42 } }));
    expect((r.json as { error: { issues: { path: string }[] } }).error.issues[0]?.path).toBe('entry[0].changes[0].value.messages[0].text.body');
    refused(await s.post('/webhook/sms', { id: 'sms-1', from: USER, text: 7 }), 400, 'invalid_payload');
    expect(s.count('inbox')).toBe(0);
  });

  it('validates the whole payload before storing any of it', async () => {
    const s = await stack({ bots: [orderBot] });
    const good = textMessage({ from: USER, text: 'first' });
    const bad = { ...textMessage({ from: USER, text: 'second' }), text: null };
    refused(await s.post('/webhook', envelope(good, bad as never)), 400, 'invalid_payload');
    expect(s.count('inbox')).toBe(0);
  });

  it('refuses a flow answer whose response_json is not JSON or has no flow_token', async () => {
    const s = await stack({ bots: [orderBot] });
    const flow = flowReplyMessage({ from: USER, flowToken: 't' });
    const withJson = (response_json: string) => ({ ...flow, interactive: { type: 'nfm_reply', nfm_reply: { name: 'flow', body: 'Sent', response_json } } });
    for (const json of ['{not json', '[1]', '{"address":"x"}']) {
      const r = await s.post('/webhook', envelope(withJson(json)));
      refused(r, 400, 'invalid_payload');
      expect(r.text).toContain('response_json');
    }
    expect(s.count('inbox')).toBe(0);
  });

  it('refuses a body over maxBodyBytes with 413', async () => {
    const s = await stack({ bots: [orderBot], maxBodyBytes: 2048 });
    const big = envelope(textMessage({ from: USER, text: 'x'.repeat(4096) }));
    refused(await s.post('/webhook', big), 413, 'too_large');
    refused(await s.post('/webhook/sms', inboundSms({ from: USER, text: 'y'.repeat(4096) })), 413, 'too_large');
    expect(s.count('inbox')).toBe(0);
  });

  it('refuses more than 1 MiB by default', async () => {
    const s = await stack({ bots: [orderBot] });
    const big = envelope(textMessage({ from: USER, text: 'x'.repeat(1024 * 1024 + 1) }));
    refused(await s.post('/webhook', big), 413, 'too_large');
    expect(s.count('inbox')).toBe(0);
  });

  it('refuses a body that is not declared as JSON with 415', async () => {
    const s = await stack({ bots: [orderBot] });
    const body = envelope(textMessage({ from: USER, text: 'hi' }));
    refused(await s.post('/webhook', body, { contentType: 'text/plain' }), 415, 'unsupported_media_type');
    refused(await s.post('/webhook', body, { contentType: 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    refused(await s.post('/webhook/sms', inboundSms({ from: USER, text: 'hi' }), { contentType: 'text/plain' }), 415, 'unsupported_media_type');
    expect(s.count('inbox')).toBe(0);
    expect((await s.post('/webhook', body, { contentType: 'application/json; charset=utf-8' })).status).toBe(200);
    await s.runtime.idle();
  });
});

describe('what is accepted', () => {
  it('stores an image (and an unknown type) as unsupported, with 200', async () => {
    const s = await stack({ bots: [orderBot] });
    const image = imageMessage({ from: USER, id: 'wamid.img', caption: 'my pizza' });
    const sticker = { from: USER, id: 'wamid.stk', timestamp: '1700000000', type: 'sticker', sticker: { id: '1' } };
    const r = await s.post('/webhook', envelope(image, sticker));
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, received: 2, duplicates: 0 });
    const events = s.store.db.prepare('SELECT event FROM inbox ORDER BY id').all() as { event: string }[];
    expect(events.map((e) => JSON.parse(e.event) as unknown)).toEqual([
      { type: 'unsupported', messageType: 'image' },
      { type: 'unsupported', messageType: 'sticker' },
    ]);
    await s.runtime.idle();
  });

  it('delivers an inbound SMS as text via sms', async () => {
    const s = await stack({ bots: [orderBot] });
    const r = await s.sb.sandbox.deliver.sms(USER, '1', { id: 'mo-1' });
    expect(r.status).toBe(200);
    const row = s.store.db.prepare('SELECT * FROM inbox').get() as Record<string, string>;
    expect(row['source']).toBe('sms');
    expect(row['provider_id']).toBe('sms:mo-1');
    expect(JSON.parse(row['event']!)).toEqual({ type: 'text', text: '1', via: 'sms' });
    await s.runtime.idle();
  });

  it('acknowledges changes of other fields without storing anything', async () => {
    const s = await stack({ bots: [orderBot] });
    const body = { object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'account_update', value: { event: 'VERIFIED_ACCOUNT' } }] }] };
    const r = await s.post('/webhook', body);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, received: 0 });
    expect(s.count('inbox')).toBe(0);
  });

  it('takes every entry, change and message of one POST, in order', async () => {
    const s = await stack({ bots: [orderBot] });
    const one = envelope(textMessage({ from: USER, id: 'wamid.a', text: 'a' }), textMessage({ from: '5215500000002', id: 'wamid.b', text: 'b' }));
    const two = envelope(textMessage({ from: USER, id: 'wamid.c', text: 'c' }));
    const entry = [...(one['entry'] as unknown[]), ...(two['entry'] as unknown[])];
    const r = await s.post('/webhook', { object: 'whatsapp_business_account', entry });
    expect(r.json).toMatchObject({ received: 3 });
    const ids = s.store.db.prepare('SELECT provider_id FROM inbox ORDER BY id').all() as { provider_id: string }[];
    expect(ids.map((i) => i.provider_id)).toEqual(['wamid.a', 'wamid.b', 'wamid.c']);
    await s.runtime.idle();
  });
});

describe('deeply nested JSON', () => {
  /** JSON text nested `depth` levels (built as text: JSON.stringify itself overflows on such values). */
  const nested = (depth: number): string => {
    let open = '';
    let close = '';
    for (let i = 0; i < depth; i++) {
      open += i % 2 ? '[' : '{"deeper":';
      close = (i % 2 ? ']' : '}') + close;
    }
    return `${open}"bottom"${close}`;
  };
  /** The body's JSON with the string "NEST" replaced by `depth` levels of nesting. */
  const withNest = (body: unknown, depth: number): string => JSON.stringify(body).replace('"NEST"', nested(depth));

  it.each([2_000, 8_000, 30_000])('a signed message nested %i levels deep is refused with 400 and stores nothing', async (depth) => {
    const s = await stack({ bots: [orderBot] });
    const message = { ...textMessage({ from: USER, text: 'hi' }), extra: 'NEST' } as unknown as CloudMessage;
    const r = await s.post('/webhook', withNest(envelope(message), depth));
    refused(r, 400, 'too_deep');
    expect((r.json as { error: { message: string } }).error.message).toMatch(/nested/);
    expect(s.count('inbox')).toBe(0);
  });

  it('a signed status whose errors are nested thousands of levels deep is refused with 400', async () => {
    const s = await stack({ bots: [orderBot] });
    const payload = webhookPayload({ statuses: [{ id: 'wamid.x', status: 'failed', timestamp: '1700000000', recipient_id: USER, errors: [{ code: 1, extra: 'NEST' }] }] } as never);
    refused(await s.post('/webhook', withNest(payload, 5_000)), 400, 'too_deep');
    expect(s.count('statuses')).toBe(0);
  });

  it('an inbound SMS nested thousands of levels deep is refused with 400', async () => {
    const s = await stack({ bots: [orderBot] });
    refused(await s.post('/webhook/sms', withNest({ ...inboundSms({ from: USER, text: 'hola' }), extra: 'NEST' }, 5_000)), 400, 'too_deep');
    expect(s.count('inbox')).toBe(0);
  });

  it('the limit is exact: a body nested 64 levels is stored, 65 levels is refused', async () => {
    const s = await stack({ bots: [orderBot] });
    const body = (extra: number, id: string) => withNest(envelope({ ...textMessage({ from: USER, text: 'hi' }), id, extra: 'NEST' } as unknown as CloudMessage), extra);
    // How deep the nested part starts: with 20 levels there, they are the deepest part of the body.
    const base = jsonDepth(Buffer.from(body(20, 'wamid.depth'))) - 20;
    expect((await s.post('/webhook', body(MAX_JSON_DEPTH - base, 'wamid.depth64'))).status).toBe(200);
    refused(await s.post('/webhook', body(MAX_JSON_DEPTH - base + 1, 'wamid.depth65')), 400, 'too_deep');
    expect(s.count('inbox')).toBe(1);
    await s.runtime.idle();
  });

  it('ordinary nesting (a few dozen levels, brackets inside strings ignored) is still accepted and stored', async () => {
    const s = await stack({ bots: [orderBot] });
    const message = { ...textMessage({ from: USER, text: '[[[[{{{{\\"'.repeat(40) }), extra: 'NEST' } as unknown as CloudMessage;
    expect((await s.post('/webhook', withNest(envelope(message), 40))).status).toBe(200);
    expect(s.count('inbox')).toBe(1);
    await s.runtime.idle();
  });
});
