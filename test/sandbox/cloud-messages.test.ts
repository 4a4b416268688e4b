import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER } from '../../src/sandbox/index.js';
import { fakeClock, start } from './helpers.js';
import { TO, buttons, expectGraphError, flow, list, postCloud, template, text, userWrites, webhook } from './cloud-helpers.js';

/** A sandbox whose user has written, so free-form messages are within the window. */
async function open(): Promise<Awaited<ReturnType<typeof start>>> {
  const hook = await webhook();
  const r = await start({ clock: fakeClock(), webhook: { url: hook.url }, cloudApi: { statuses: false } });
  await userWrites(r.sandbox);
  return r;
}

describe('Cloud API mode: accepted messages', () => {
  it.each([
    ['text', text()],
    ['interactive:list', list(10)],
    ['interactive:button', buttons({ type: 'text', text: 'Sizes' })],
    ['interactive:button', buttons({ type: 'image', image: { link: 'https://example.com/p.jpg' } })],
    ['interactive:button', buttons({ type: 'video', video: { id: '9876' } })],
    ['interactive:button', buttons({ type: 'document', document: { link: 'https://example.com/menu.pdf', filename: 'menu.pdf' } })],
    ['interactive:flow', flow()],
    ['interactive:flow', flow({ flow_id: undefined, flow_name: 'booking', flow_action: 'data_exchange', flow_action_payload: undefined, mode: 'draft' })],
    ['template', template()],
  ])('accepts %s and records it exactly', async (type, body) => {
    const { url, sandbox } = await open();
    const sent = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
    const res = await postCloud(url, sent).expect(200);
    const id = res.body.messages[0].id as string;
    expect(id).toMatch(/^wamid\./);
    expect(res.body).toEqual({ messaging_product: 'whatsapp', contacts: [{ input: TO, wa_id: TO }], messages: [type === 'template' ? { id, message_status: 'accepted' } : { id }] });
    expect(sandbox.messages).toEqual([{ seq: 1, channel: 'cloud-api', numberId: SANDBOX_PHONE_NUMBER_ID, from: SANDBOX_SENDER, to: TO, type, request: sent, providerId: id, at: 1_700_000_000_000 }]);
    expect(sandbox.messagesTo(TO)).toEqual(sandbox.messages);
    const [req] = sandbox.requestsTo('cloud-api');
    expect(req).toMatchObject({ endpoint: 'cloud-api', method: 'POST', path: `/cloud/v23.0/${SANDBOX_PHONE_NUMBER_ID}/messages`, status: 200, body: sent });
    expect(req?.headers['authorization']).toBe('Bearer <redacted>');
  });

  it('takes a text without `type` (Meta defaults it to text) and any v{major}.{minor}', async () => {
    const { url, sandbox } = await open();
    const { type: _type, ...body } = text();
    await postCloud(url, body, { version: 'v19.0' }).expect(200);
    expect(sandbox.messages[0]).toMatchObject({ type: 'text' });
  });
});

describe('Cloud API mode: who may call', () => {
  it('refuses a missing or wrong token with 401 and code 190, before anything else', async () => {
    const { url, sandbox } = await open();
    const missing = await postCloud(url, text(), { token: null });
    expectGraphError(missing, 401, 190);
    expect(missing.headers['www-authenticate']).toContain('invalid_token');
    expectGraphError(await postCloud(url, text(), { token: 'nope' }), 401, 190);
    expectGraphError(await postCloud(url, 'not json', { token: 'nope', number: '999' }), 401, 190);
    expect(sandbox.messages).toEqual([]);
    expect(sandbox.requestsTo('cloud-api').map((r) => r.status)).toEqual([401, 401, 401]);
  });

  it('refuses an unknown phone_number_id with 400, code 100, subcode 33', async () => {
    const { url } = await open();
    const res = await postCloud(url, text(), { number: '123456789' });
    expectGraphError(res, 400, 100, "'123456789'");
    expect(res.body.error.error_subcode).toBe(33);
  });

  it('refuses a version that is not v{major}.{minor}, another content type, bad JSON and a non-object', async () => {
    const { url } = await open();
    expectGraphError(await postCloud(url, text(), { version: 'latest' }), 400, 100, 'latest');
    const form = await request(url).post(`/cloud/v23.0/${SANDBOX_PHONE_NUMBER_ID}/messages`).set('Authorization', 'Bearer sandbox-cloud-api-token').type('form').send({ to: TO });
    expectGraphError(form, 400, 100, 'application/json');
    const bad = await request(url).post(`/cloud/v23.0/${SANDBOX_PHONE_NUMBER_ID}/messages`).set('Authorization', 'Bearer sandbox-cloud-api-token').type('json').send('{"to":');
    expectGraphError(bad, 400, 100, 'not valid JSON');
    expectGraphError(await postCloud(url, [text()]), 400, 100, 'JSON object');
  });

  it('answers a body over 1 MB with 413 in the Graph shape', async () => {
    const { url } = await open();
    expectGraphError(await postCloud(url, text('x'.repeat(1_100_000))), 413, 100);
  });

  it('answers GET with 405', async () => {
    const { url } = await open();
    const res = await request(url).get(`/cloud/v23.0/${SANDBOX_PHONE_NUMBER_ID}/messages`).expect(405);
    expect(res.headers['allow']).toBe('POST');
  });
});
