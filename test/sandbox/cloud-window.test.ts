import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { REENGAGEMENT_DETAILS, SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER, SANDBOX_WINDOW_MS } from '../../src/sandbox/index.js';
import { fakeClock, start } from './helpers.js';
import { TO, buttons, expectGraphError, postCloud, statusesIn, template, text, userWrites, changeValue, webhook } from './cloud-helpers.js';

const HOUR = 60 * 60 * 1000;

describe('Cloud API mode: the 24-hour window', () => {
  it('refuses free-form messages to a user who never wrote, with 131047, and lets templates through', async () => {
    const { url, sandbox } = await start();
    const res = await postCloud(url, text());
    expectGraphError(res, 400, 131047, REENGAGEMENT_DETAILS);
    expect(res.body.error.message).toBe('(#131047) Re-engagement message');
    expectGraphError(await postCloud(url, buttons()), 400, 131047);
    await postCloud(url, template()).expect(200);
    expect(sandbox.messages.map((m) => m.channel === 'cloud-api' && m.type)).toEqual(['template']);
    expect(sandbox.window(TO)).toEqual({ open: false });
  });

  it('opens when the user writes and closes 24 hours later, by the sandbox clock', async () => {
    const hook = await webhook();
    const clock = fakeClock();
    const { url, sandbox } = await start({ clock, webhook: { url: hook.url }, cloudApi: { statuses: false } });
    await userWrites(sandbox);
    const at = clock.now();
    expect(sandbox.window(TO)).toEqual({ open: true, lastUserMessageAt: at, closesAt: at + SANDBOX_WINDOW_MS });
    clock.advance(SANDBOX_WINDOW_MS - 1);
    await postCloud(url, text()).expect(200);
    clock.advance(1);
    expect(sandbox.window(TO, SANDBOX_PHONE_NUMBER_ID)).toEqual({ open: false, lastUserMessageAt: at, closesAt: at + SANDBOX_WINDOW_MS });
    expectGraphError(await postCloud(url, text()), 400, 131047);
    const shown = await request(url).get('/_sandbox/window').query({ user: TO }).expect(200);
    expect(shown.body).toEqual({ open: false, lastUserMessageAt: at, closesAt: at + SANDBOX_WINDOW_MS });
    await sandbox.deliver.image(TO);
    await postCloud(url, text()).expect(200);
    expect((await request(url).get('/_sandbox/window').expect(200)).body).toEqual([
      { user: TO, numberId: SANDBOX_PHONE_NUMBER_ID, open: true, lastUserMessageAt: clock.now(), closesAt: clock.now() + SANDBOX_WINDOW_MS },
    ]);
  });

  it('takes its length from windowMs, and counts raw payloads and control deliveries', async () => {
    const hook = await webhook();
    const clock = fakeClock();
    const { url, sandbox } = await start({ clock, webhook: { url: hook.url }, cloudApi: { windowMs: HOUR, statuses: false } });
    await request(url).post('/_sandbox/deliver').send({ kind: 'text', from: TO, text: 'hi' }).expect(200);
    clock.advance(HOUR);
    expectGraphError(await postCloud(url, text()), 400, 131047);
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: '1',
          changes: [
            {
              field: 'messages',
              value: {
                metadata: { display_phone_number: SANDBOX_SENDER, phone_number_id: SANDBOX_PHONE_NUMBER_ID },
                messages: [{ from: TO, id: 'wamid.raw', timestamp: '1', type: 'text', text: { body: 'x' } }],
              },
            },
          ],
        },
      ],
    };
    await sandbox.deliver.payload(payload);
    await postCloud(url, text()).expect(200);
  });

  it('with windowErrors "status", accepts the message and posts a failed status with 131047 to the webhook', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ clock: fakeClock(), webhook: { url: hook.url }, cloudApi: { windowErrors: 'status' } });
    const res = await postCloud(url, text()).expect(200);
    const id = res.body.messages[0].id as string;
    expect(id).toMatch(/^wamid\./);
    await sandbox.statusesPosted();
    expect(hook.received).toHaveLength(1);
    expect(changeValue(hook.received[0]).metadata).toEqual({ display_phone_number: SANDBOX_SENDER, phone_number_id: SANDBOX_PHONE_NUMBER_ID });
    expect(statusesIn(hook.received)).toEqual([
      {
        id,
        status: 'failed',
        timestamp: '1700000000',
        recipient_id: TO,
        errors: [{ code: 131047, title: 'Re-engagement message', message: 'Re-engagement message', error_data: { details: REENGAGEMENT_DETAILS } }],
      },
    ]);
    expect(sandbox.messages).toEqual([]);
    expect(sandbox.requestsTo('cloud-api')[0]?.status).toBe(200);
  });

  it('posts sent then delivered for each accepted message, in order, unless statuses is false', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ clock: fakeClock(), webhook: { url: hook.url } });
    await userWrites(sandbox);
    const a = (await postCloud(url, text('one')).expect(200)).body.messages[0].id;
    const b = (await postCloud(url, template()).expect(200)).body.messages[0].id;
    await sandbox.statusesPosted();
    expect(statusesIn(hook.received).map((s) => [s.id, s.status, s.recipient_id])).toEqual([
      [a, 'sent', TO],
      [a, 'delivered', TO],
      [b, 'sent', TO],
      [b, 'delivered', TO],
    ]);
    const quiet = await webhook();
    const other = await start({ webhook: { url: quiet.url }, cloudApi: { statuses: false } });
    await userWrites(other.sandbox);
    await postCloud(other.url, text()).expect(200);
    await other.sandbox.statusesPosted();
    expect(quiet.received).toHaveLength(1);
  });
});

describe('Cloud API mode: several numbers', () => {
  const numbers = [
    { phoneNumberId: '111111111111111', displayNumber: '15550001111' },
    { phoneNumberId: '222222222222222', displayNumber: '15550002222', token: 'second-token' },
  ];

  it('keeps a window per number, checks each number its token, and names the number in webhook metadata', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ clock: fakeClock(), webhook: { url: hook.url }, cloudApi: { numbers, token: 'first-token', statuses: false } });
    await sandbox.deliver.text(TO, 'hola');
    await sandbox.deliver.text('5215500000002', 'hello', { to: '222222222222222' });
    expect(changeValue(hook.received[0]).metadata).toEqual({ display_phone_number: '15550001111', phone_number_id: '111111111111111' });
    expect(changeValue(hook.received[1]).metadata).toEqual({ display_phone_number: '15550002222', phone_number_id: '222222222222222' });
    expect(sandbox.window(TO, '111111111111111').open).toBe(true);
    expect(sandbox.window(TO, '15550002222').open).toBe(false);
    await postCloud(url, text(), { number: '111111111111111', token: 'first-token' }).expect(200);
    expectGraphError(await postCloud(url, text(), { number: '222222222222222', token: 'second-token' }), 400, 131047);
    expectGraphError(await postCloud(url, text(), { number: '222222222222222', token: 'first-token' }), 401, 190);
    await postCloud(url, text('x', '5215500000002'), { number: '222222222222222', token: 'second-token' }).expect(200);
    expect(sandbox.messages.map((m) => m.channel === 'cloud-api' && [m.numberId, m.from, m.to])).toEqual([
      ['111111111111111', '15550001111', TO],
      ['222222222222222', '15550002222', '5215500000002'],
    ]);
  });

  it('posts the statuses of a message about the number that sent it', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ webhook: { url: hook.url }, cloudApi: { numbers, token: 'first-token' } });
    const id = (await postCloud(url, template(), { number: '222222222222222', token: 'second-token' }).expect(200)).body.messages[0].id;
    await sandbox.statusesPosted();
    expect(hook.received.map((p) => [changeValue(p).metadata.phone_number_id, changeValue(p).statuses[0].id, changeValue(p).statuses[0].status])).toEqual([
      ['222222222222222', id, 'sent'],
      ['222222222222222', id, 'delivered'],
    ]);
  });

  it('answers a tap on the number the tapped message came from', async () => {
    const hook = await webhook();
    const { url, sandbox } = await start({ webhook: { url: hook.url }, cloudApi: { numbers, token: 'first-token', statuses: false } });
    await postCloud(url, { ...buttons(), to: TO }, { number: '222222222222222', token: 'second-token' }).expect(400);
    await sandbox.deliver.text(TO, 'hi', { to: '15550002222' });
    const id = (await postCloud(url, buttons(), { number: '222222222222222', token: 'second-token' }).expect(200)).body.messages[0].id;
    await sandbox.deliver.buttonReply(TO, { id: 's', title: 'Small' });
    const value = changeValue(hook.received[1]);
    expect(value.metadata).toEqual({ display_phone_number: '15550002222', phone_number_id: '222222222222222' });
    expect(value.messages[0].context).toEqual({ from: '15550002222', id });
  });
});

describe('Cloud API mode: read receipts', () => {
  it('accepts status read with a typing indicator and records who it was for', async () => {
    const hook = await webhook();
    const clock = fakeClock();
    const { url, sandbox } = await start({ clock, webhook: { url: hook.url } });
    const inbound = await sandbox.deliver.text(TO, 'hi', { id: 'wamid.user-1' });
    expect(inbound.ok).toBe(true);
    const seen: unknown[] = [];
    sandbox.onRead((r) => seen.push(r));
    const res = await postCloud(url, { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.user-1', typing_indicator: { type: 'text' } }).expect(200);
    expect(res.body).toEqual({ success: true });
    await postCloud(url, { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.elsewhere' }).expect(200);
    const first = { seq: 1, numberId: SANDBOX_PHONE_NUMBER_ID, messageId: 'wamid.user-1', user: TO, typing: true, at: clock.now() };
    expect(sandbox.reads()).toEqual([first, { seq: 2, numberId: SANDBOX_PHONE_NUMBER_ID, messageId: 'wamid.elsewhere', user: undefined, typing: false, at: clock.now() }]);
    expect(sandbox.reads(TO)).toEqual([first]);
    expect(seen).toHaveLength(2);
    expect((await request(url).get('/_sandbox/reads').query({ user: TO }).expect(200)).body).toEqual([first]);
    expect(sandbox.messages).toEqual([]);
    await sandbox.statusesPosted();
    expect(hook.received).toHaveLength(1);
  });

  it('refuses a malformed read receipt with the field path', async () => {
    const { url, sandbox } = await start();
    expectGraphError(await postCloud(url, { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.x', typing_indicator: { type: 'audio' } }), 400, 131009, 'typing_indicator.type');
    expectGraphError(await postCloud(url, { messaging_product: 'whatsapp', status: 'read' }), 400, 131008, 'message_id: is required');
    expectGraphError(await postCloud(url, { messaging_product: 'whatsapp', status: 'delivered', message_id: 'wamid.x' }), 400, 131009, 'status');
    expect(sandbox.reads()).toEqual([]);
  });
});
