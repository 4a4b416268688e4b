/**
 * Several numbers on one webhook: routing by phone_number_id, one app secret per Meta app (a body
 * signed by one app cannot speak for another app's number), template quick replies, and the number
 * written to kept with each stored message.
 */
import { describe, expect, it } from 'vitest';
import { defineBot } from '../../src/conversation/index.js';
import { parseNumbers, type NumbersConfig } from '../../src/numbers/index.js';
import { SANDBOX_SENDER, inboundSms, signBody, statusUpdate, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import orderBot, { machine } from '../fixtures/order-bot.js';
import { SECRET, USER, codeOf, stack, type Answer, type Stack } from './helpers.js';

const SECRET_A = 'app-secret-of-meta-app-a';
const SECRET_B = 'app-secret-of-meta-app-b';
const A = { phoneNumberId: '106540352242922', displayNumber: '+1 555 000 1111', digits: '15550001111' };
const B = { phoneNumberId: '106540352242933', displayNumber: '+1 555 000 2222', digits: '15550002222' };
const C = { phoneNumberId: '106540352242944', displayNumber: '+1 555 000 3333', digits: '15550003333' };

const twoBot = defineBot({ id: 'order-two', machine });
const threeBot = defineBot({ id: 'order-three', machine });

/** A numbers file: A → order (app A), B → order-two (app B), C → order-three (default secret). */
function numbersFile(): NumbersConfig {
  return parseNumbers(
    {
      numbers: [
        { phoneNumberId: A.phoneNumberId, displayNumber: A.displayNumber, bot: 'order', token: 'token-a', appSecretEnv: 'APP_A_SECRET' },
        { phoneNumberId: B.phoneNumberId, displayNumber: B.displayNumber, bot: 'order-two', token: 'token-b', appSecret: SECRET_B },
        { phoneNumberId: C.phoneNumberId, displayNumber: C.displayNumber, bot: 'order-three' },
      ],
    },
    { file: 'numbers.json', env: { APP_A_SECRET: SECRET_A } },
  );
}

const textTo = (to: { phoneNumberId?: string; display: string }, id: string, from = USER) =>
  webhookPayload({ phoneNumberId: to.phoneNumberId, displayPhoneNumber: to.display, messages: [textMessage({ from, text: 'hi', id })] });

/** Posts a body signed with `secret` (undefined: unsigned). */
function postSigned(s: Stack, body: unknown, secret: string | undefined, path = '/webhook'): Promise<Answer> {
  const raw = JSON.stringify(body);
  return s.post(path, raw, secret === undefined ? { sign: false } : { signature: signBody(secret, raw) });
}

const inboxRows = (s: Stack) => s.store.db.prepare('SELECT provider_id AS id, bot_id AS bot FROM inbox ORDER BY rowid').all();

describe('routing by phone_number_id', () => {
  it('sends each message to the bot of the phone_number_id written to, before the display number', async () => {
    const s = await stack({ bots: [orderBot, twoBot, threeBot], numbers: numbersFile() });
    expect((await postSigned(s, textTo({ phoneNumberId: A.phoneNumberId, display: A.displayNumber }, 'wamid.a'), SECRET_A)).status).toBe(200);
    // The phone_number_id wins over a display number of another number.
    const byId = textTo({ phoneNumberId: B.phoneNumberId, display: A.digits }, 'wamid.b');
    expect((await postSigned(s, byId, SECRET_B)).status).toBe(200);
    // An id not configured falls back to the display number, as before numbers files.
    const byDisplay = textTo({ phoneNumberId: '999', display: C.displayNumber }, 'wamid.c');
    expect((await postSigned(s, byDisplay, SECRET)).status).toBe(200);
    await s.runtime.idle();
    expect(inboxRows(s)).toEqual([
      { id: 'wamid.a', bot: 'order' },
      { id: 'wamid.b', bot: 'order-two' },
      { id: 'wamid.c', bot: 'order-three' },
    ]);
  });

  it('keeps the 422 for a number nobody serves, and drops statuses about it', async () => {
    const s = await stack({ bots: [orderBot, twoBot, threeBot], numbers: numbersFile() });
    const unknown = textTo({ phoneNumberId: '999', display: '19998887777' }, 'wamid.x');
    const r = await postSigned(s, unknown, SECRET);
    expect(r.status).toBe(422);
    expect(codeOf(r)).toBe('unknown_number');
    expect(r.text).toContain('No bot serves the number 19998887777 (entry[0].changes[0].value.metadata.display_phone_number)');
    const status = statusUpdate({ id: 'wamid.out', status: 'delivered', recipient: USER });
    const dropped = await postSigned(s, webhookPayload({ phoneNumberId: '999', displayPhoneNumber: '19998887777', statuses: [status] }), SECRET);
    expect(dropped.json).toEqual({ ok: true, received: 0, duplicates: 0, statuses: 0, ignoredStatuses: 1 });
    const ours = await postSigned(s, webhookPayload({ phoneNumberId: B.phoneNumberId, displayPhoneNumber: '19998887777', statuses: [status] }), SECRET_B);
    expect(ours.json).toEqual({ ok: true, received: 0, duplicates: 0, statuses: 1 });
    expect(s.count('inbox')).toBe(0);
    expect(s.count('statuses')).toBe(1);
  });

  it("routes by a bot's own phoneNumberId option", async () => {
    const byOption = defineBot({ id: 'order-two', machine, options: { sender: '15550000002', phoneNumberId: '4242' } });
    const s = await stack({ bots: [orderBot, byOption] });
    expect((await s.post('/webhook', textTo({ phoneNumberId: '4242', display: SANDBOX_SENDER }, 'wamid.opt'))).status).toBe(200);
    expect((await s.post('/webhook', textTo({ phoneNumberId: '1', display: SANDBOX_SENDER }, 'wamid.default'))).status).toBe(200);
    await s.runtime.idle();
    expect(inboxRows(s)).toEqual([
      { id: 'wamid.opt', bot: 'order-two' },
      { id: 'wamid.default', bot: 'order' },
    ]);
  });
});

describe('one app secret per Meta app', () => {
  it("accepts each number's webhooks signed with its own app's secret", async () => {
    const s = await stack({ bots: [orderBot, twoBot, threeBot], numbers: numbersFile() });
    expect((await postSigned(s, textTo({ phoneNumberId: A.phoneNumberId, display: A.displayNumber }, 'wamid.a'), SECRET_A)).status).toBe(200);
    expect((await postSigned(s, textTo({ phoneNumberId: B.phoneNumberId, display: B.displayNumber }, 'wamid.b'), SECRET_B)).status).toBe(200);
    // C has no app secret of its own: the default secret signs it.
    expect((await postSigned(s, textTo({ phoneNumberId: C.phoneNumberId, display: C.displayNumber }, 'wamid.c'), SECRET)).status).toBe(200);
    await s.runtime.idle();
    expect(s.count('inbox')).toBe(3);
  });

  it("refuses a body signed by app A that claims app B's number: 401, nothing stored", async () => {
    const s = await stack({ bots: [orderBot, twoBot, threeBot], numbers: numbersFile() });
    const toB = textTo({ phoneNumberId: B.phoneNumberId, display: B.displayNumber }, 'wamid.b');
    for (const secret of [SECRET_A, SECRET]) {
      const r = await postSigned(s, toB, secret);
      expect(r.status).toBe(401);
      expect(codeOf(r)).toBe('signature_wrong_app');
      expect(r.text).toContain(`does not match the app of number ${B.digits} (phone_number_id ${B.phoneNumberId}) at entry[0].changes[0].value.metadata`);
      for (const x of [SECRET_A, SECRET_B, SECRET]) expect(r.text).not.toContain(x);
    }
    // App A's secret does not sign for the default secret's number either.
    expect(codeOf(await postSigned(s, textTo({ phoneNumberId: C.phoneNumberId, display: C.displayNumber }, 'wamid.c'), SECRET_A))).toBe('signature_wrong_app');
    // One change of its own and one of another app's: the whole body is refused.
    const mixed = { object: 'whatsapp_business_account', entry: [...entries(textTo({ phoneNumberId: A.phoneNumberId, display: A.displayNumber }, 'wamid.a')), ...entries(toB)] };
    const r = await postSigned(s, mixed, SECRET_A);
    expect(r.status).toBe(401);
    expect(r.text).toContain('entry[1].changes[0].value.metadata');
    // Statuses are about a number too.
    const status = webhookPayload({ phoneNumberId: B.phoneNumberId, displayPhoneNumber: B.displayNumber, statuses: [statusUpdate({ id: 'wamid.out', status: 'read', recipient: USER })] });
    expect((await postSigned(s, status, SECRET_A)).status).toBe(401);
    expect(s.count('inbox')).toBe(0);
    expect(s.count('statuses')).toBe(0);
    expect(s.runtime.metrics.value('colloquy_webhook_requests_total', { route: 'webhook', outcome: 'signature_wrong_app' })).toBe(5);
  });

  it('refuses a signature of no configured secret, or none, as before', async () => {
    const s = await stack({ bots: [orderBot, twoBot, threeBot], numbers: numbersFile() });
    const toA = textTo({ phoneNumberId: A.phoneNumberId, display: A.displayNumber }, 'wamid.a');
    expect(codeOf(await postSigned(s, toA, 'a-secret-of-nobody'))).toBe('signature_invalid');
    expect(codeOf(await postSigned(s, toA, undefined))).toBe('signature_missing');
    expect(s.count('inbox')).toBe(0);
  });

  it('checks app secrets without a default secret; an unserved number’s status in the same body is dropped, not refused', async () => {
    const withoutC = parseNumbers(
      { numbers: [numbersFile().numbers[0], numbersFile().numbers[1]].map((n) => ({ phoneNumberId: n!.phoneNumberId, displayNumber: n!.displayNumber, bot: n!.bot, appSecret: n!.appSecret })) },
      { file: 'numbers.json', env: {} },
    );
    const s = await stack({ bots: [orderBot, twoBot], numbers: withoutC, secret: null });
    expect((await postSigned(s, textTo({ phoneNumberId: A.phoneNumberId, display: A.displayNumber }, 'wamid.a'), undefined)).status).toBe(401);
    expect((await postSigned(s, textTo({ phoneNumberId: A.phoneNumberId, display: A.displayNumber }, 'wamid.a'), SECRET_A)).status).toBe(200);
    // App A's webhook also reports a status about a number of A's that no bot here serves.
    const mixed = textTo({ phoneNumberId: A.phoneNumberId, display: A.displayNumber }, 'wamid.a2');
    const entry = (mixed as { entry: { changes: unknown[] }[] }).entry[0]!;
    const other = webhookPayload({ phoneNumberId: '999', displayPhoneNumber: '19998887777', statuses: [statusUpdate({ id: 'wamid.elsewhere', status: 'delivered', recipient: USER })] });
    entry.changes.push((other as { entry: { changes: unknown[] }[] }).entry[0]!.changes[0]);
    const r = await postSigned(s, mixed, SECRET_A);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ received: 1, ignoredStatuses: 1 });
    await s.runtime.idle();
    expect(s.count('inbox')).toBe(2);
  });

  it('takes an inbound SMS signed by the relay’s secret (COLLOQUY_WEBHOOK_SECRET), not by a Meta app’s', async () => {
    const s = await stack({ bots: [orderBot, twoBot, threeBot], numbers: numbersFile() });
    const sms = inboundSms({ from: USER, to: B.digits, text: 'hola' });
    const wrong = await postSigned(s, sms, SECRET_B, '/webhook/sms');
    expect(wrong.status).toBe(401);
    expect(wrong.text).toContain('COLLOQUY_WEBHOOK_SECRET');
    expect((await postSigned(s, sms, SECRET, '/webhook/sms')).status).toBe(200);
    await s.runtime.idle();
    expect(s.count('inbox')).toBe(1);
  });

  it('refuses at start a number whose webhooks could never be accepted', async () => {
    await expect(stack({ bots: [orderBot, twoBot, threeBot], numbers: numbersFile(), secret: null })).rejects.toThrow(
      'numbers[2] (15550003333) has no appSecret and no default webhook secret (COLLOQUY_WEBHOOK_SECRET) is set',
    );
  });
});

function entries(payload: Record<string, unknown>): unknown[] {
  return payload['entry'] as unknown[];
}

describe('inbound messages', () => {
  it("turns a tap on a template's quick-reply button into reply.<payload> via template", async () => {
    const s = await stack({ bots: [orderBot] });
    const tap = {
      from: USER,
      id: 'wamid.tap',
      timestamp: '1764000000',
      type: 'button',
      context: { from: SANDBOX_SENDER, id: 'wamid.template' },
      button: { payload: 'confirm-slot', text: 'Yes, book it' },
    };
    expect((await s.post('/webhook', webhookPayload({ messages: [tap as never] }))).status).toBe(200);
    const row = s.store.db.prepare('SELECT event FROM inbox WHERE provider_id = ?').get('wamid.tap') as { event: string };
    expect(JSON.parse(row.event)).toEqual({ type: 'reply.confirm-slot', id: 'confirm-slot', title: 'Yes, book it', via: 'template' });
    await s.runtime.idle();
  });

  it('refuses a template button with a bad payload: 400 naming the path, nothing stored', async () => {
    const s = await stack({ bots: [orderBot] });
    for (const button of [{ payload: '', text: 'Yes' }, { payload: 'a\u0000b', text: 'Yes' }, { text: 'Yes' }]) {
      const tap = { from: USER, id: 'wamid.bad', timestamp: '1764000000', type: 'button', button };
      const r = await s.post('/webhook', webhookPayload({ messages: [tap as never] }));
      expect(r.status).toBe(400);
      expect(codeOf(r)).toBe('invalid_payload');
      expect(r.text).toContain('entry[0].changes[0].value.messages[0].button.payload');
    }
    expect(s.count('inbox')).toBe(0);
  });

  it('stores each message with the metadata of the number it was written to', async () => {
    const s = await stack({ bots: [orderBot, twoBot, threeBot], numbers: numbersFile() });
    const payload = textTo({ phoneNumberId: B.phoneNumberId, display: B.displayNumber }, 'wamid.meta');
    expect((await postSigned(s, payload, SECRET_B)).status).toBe(200);
    const row = s.store.db.prepare('SELECT raw FROM inbox WHERE provider_id = ?').get('wamid.meta') as { raw: string };
    const message = (entries(payload)[0] as { changes: { value: { messages: unknown[] } }[] }).changes[0]!.value.messages[0] as object;
    expect(JSON.parse(row.raw)).toEqual({ ...message, metadata: { phone_number_id: B.phoneNumberId, display_phone_number: B.displayNumber } });
    await s.runtime.idle();
  });
});
