import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { fakeClock, start } from './helpers.js';
import { TO, expectGraphError, postCloud, statusesIn, template, text, userWrites, webhook } from './cloud-helpers.js';

async function open(options: { statuses?: boolean } = {}) {
  const hook = await webhook();
  const waits: number[] = [];
  const r = await start({ clock: fakeClock(), webhook: { url: hook.url }, cloudApi: { statuses: options.statuses ?? false }, sleep: async (ms) => void waits.push(ms) });
  await userWrites(r.sandbox);
  return { ...r, hook, waits };
}

describe('Cloud API mode: faults', () => {
  it('answers injected statuses in the Graph error shape, for cloud-api and any', async () => {
    const { url, sandbox } = await open();
    sandbox.faults.fail('cloud-api', { status: 503 });
    expectGraphError(await postCloud(url, text()), 503, 131000);
    sandbox.faults.fail('messaging', { status: 500 });
    sandbox.faults.fail('any', { status: 401 });
    expectGraphError(await postCloud(url, text()), 401, 190);
    await postCloud(url, text()).expect(200);
    expect(sandbox.requestsTo('cloud-api').map((r) => r.fault)).toEqual(['status', 'status', undefined]);
  });

  it('answers 429 with Retry-After and code 130429 for a rate-limit fault', async () => {
    const { url, sandbox } = await open();
    sandbox.faults.rateLimit('cloud-api', { retryAfter: 4 });
    const res = await postCloud(url, text());
    expectGraphError(res, 429, 130429);
    expect(res.headers['retry-after']).toBe('4');
  });

  it.each([
    [130429, 429],
    [131056, 400],
    [131026, 400],
    [131000, 500],
    [131047, 400],
    [190, 401],
  ])('answers the Meta code %i with HTTP %i to the next valid message', async (code, status) => {
    const { url, sandbox } = await open();
    sandbox.faults.cloudError(code, { times: 1 });
    await postCloud(url, { messaging_product: 'whatsapp', to: TO }).expect(400);
    expectGraphError(await postCloud(url, text()), status, code);
    await postCloud(url, text()).expect(200);
    expect(sandbox.messages).toHaveLength(1);
    expect(sandbox.requestsTo('cloud-api').map((r) => r.fault)).toEqual([undefined, 'cloud-error', undefined]);
  });

  it('adds Retry-After, a status and details when asked, only for the users named, and not to read receipts', async () => {
    const { url, sandbox } = await open();
    sandbox.faults.cloudError(130429, { retryAfter: 2, details: 'slow down', to: TO, times: 2 });
    await postCloud(url, { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.x' }).expect(200);
    const res = await postCloud(url, template('colloquy_reopen', undefined, 'en', '5215500000009'));
    expect(res.status).toBe(200);
    const limited = await postCloud(url, text());
    expectGraphError(limited, 429, 130429, 'slow down');
    expect(limited.headers['retry-after']).toBe('2');
    expect(sandbox.faults.snapshot().cloudErrors).toEqual([{ code: 130429, delivery: 'sync', to: [TO], remaining: 1 }]);
  });

  it('delivers a Meta code as a failed status when asked (131026 after acceptance)', async () => {
    const { url, sandbox, hook } = await open({ statuses: true });
    sandbox.faults.cloudError(131026, { delivery: 'status' });
    const id = (await postCloud(url, text()).expect(200)).body.messages[0].id;
    await sandbox.statusesPosted();
    expect(statusesIn(hook.received)).toEqual([
      {
        id,
        status: 'failed',
        timestamp: expect.any(String),
        recipient_id: TO,
        errors: [{ code: 131026, title: 'Message undeliverable', message: 'Message undeliverable', error_data: { details: 'Message Undeliverable.' } }],
      },
    ]);
    expect(sandbox.messages).toEqual([]);
  });

  it('refuses recipients given to refuseInteractive, in the Graph shape', async () => {
    const { url, sandbox } = await open();
    sandbox.faults.refuseInteractive(TO, { code: 131026, message: 'Message undeliverable', details: 'not on WhatsApp' });
    const res = await postCloud(url, text());
    expectGraphError(res, 400, 131026, 'not on WhatsApp');
    expect(sandbox.requestsTo('cloud-api')[0]?.fault).toBe('refused');
  });

  it('waits injected latency on the cloud endpoint', async () => {
    const { url, sandbox, waits } = await open();
    sandbox.faults.latency(250, { endpoint: 'cloud-api', times: 1 });
    await postCloud(url, text()).expect(200);
    await postCloud(url, text()).expect(200);
    expect(waits).toEqual([250]);
  });

  it('takes cloud faults from the control routes', async () => {
    const { url } = await open();
    await request(url).post('/_sandbox/faults/cloud-error').send({ code: 131056, times: 1 }).expect(200);
    expectGraphError(await postCloud(url, text()), 400, 131056);
    await request(url).post('/_sandbox/faults/fail').send({ endpoint: 'cloud-api', status: 502 }).expect(200);
    expectGraphError(await postCloud(url, text()), 502, 131000);
    const listed = await request(url).get('/_sandbox/requests').query({ endpoint: 'cloud-api' }).expect(200);
    expect(listed.body.map((r: { status: number }) => r.status)).toEqual([400, 502]);
    await request(url).post('/_sandbox/faults/cloud-error').send({ code: 0 }).expect(400);
  });
});
