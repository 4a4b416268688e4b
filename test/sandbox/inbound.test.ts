import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SANDBOX_BUSINESS_ACCOUNT_ID, SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER } from '../../src/sandbox/constants.js';
import { buttonReplyMessage, flowReplyMessage, imageMessage, inboundSms, listReplyMessage, signBody, statusUpdate, textMessage, verifySignature, webhookPayload } from '../../src/sandbox/inbound.js';

const at = 1_700_000_000_999;
const user = '5215512345678';

describe('inbound payload builders', () => {
  it('builds a text message in the Cloud API envelope with its contact', () => {
    const message = textMessage({ from: user, id: 'wamid.in1', at, text: 'hola' });
    expect(message).toEqual({ from: user, id: 'wamid.in1', timestamp: '1700000000', type: 'text', text: { body: 'hola' } });
    expect(webhookPayload({ messages: [message], names: { [user]: 'Ana' } })).toEqual({
      object: 'whatsapp_business_account',
      entry: [
        {
          id: SANDBOX_BUSINESS_ACCOUNT_ID,
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: SANDBOX_SENDER, phone_number_id: SANDBOX_PHONE_NUMBER_ID },
                contacts: [{ profile: { name: 'Ana' }, wa_id: user }],
                messages: [message],
              },
            },
          ],
        },
      ],
    });
  });

  it('builds button_reply and list_reply with the context of the message tapped', () => {
    const context = { from: SANDBOX_SENDER, id: 'wamid.out1' };
    expect(buttonReplyMessage({ from: user, at, buttonId: 'small', title: 'Small', context })).toEqual({
      from: user,
      id: expect.stringMatching(/^wamid\./),
      timestamp: '1700000000',
      type: 'interactive',
      context,
      interactive: { type: 'button_reply', button_reply: { id: 'small', title: 'Small' } },
    });
    expect(listReplyMessage({ from: user, at, rowId: '3', title: 'Pizza 3', description: 'Cheese' }).interactive).toEqual({
      type: 'list_reply',
      list_reply: { id: '3', title: 'Pizza 3', description: 'Cheese' },
    });
  });

  it('builds nfm_reply whose response_json is a string holding flow_token and the answers', () => {
    const message = flowReplyMessage({ from: user, flowToken: 'tok-1', data: { size: 'L', qty: 2 } });
    const interactive = message.interactive as { type: string; nfm_reply: { name: string; body: string; response_json: string } };
    expect(interactive.type).toBe('nfm_reply');
    expect(interactive.nfm_reply).toMatchObject({ name: 'flow', body: 'Sent' });
    expect(typeof interactive.nfm_reply.response_json).toBe('string');
    expect(JSON.parse(interactive.nfm_reply.response_json)).toEqual({ flow_token: 'tok-1', size: 'L', qty: 2 });
  });

  it('builds an image message', () => {
    const message = imageMessage({ from: user, caption: 'my pizza' });
    expect(message.type).toBe('image');
    expect(message.image).toEqual({ id: expect.stringMatching(/^\d+$/), mime_type: 'image/jpeg', sha256: expect.any(String), caption: 'my pizza' });
  });

  it.each(['sent', 'delivered', 'read'] as const)('builds a %s status without errors', (status) => {
    expect(statusUpdate({ id: 'wamid.out1', status, recipient: user, at })).toEqual({ id: 'wamid.out1', status, timestamp: '1700000000', recipient_id: user });
  });

  it('builds a failed status with errors', () => {
    const failed = statusUpdate({ id: 'wamid.out1', status: 'failed', recipient: user, at });
    expect(failed.errors).toEqual([{ code: 131047, title: 'Re-engagement message', message: 'Re-engagement message', error_data: { details: expect.any(String) } }]);
    const custom = statusUpdate({ id: 'x', status: 'failed', recipient: user, errors: [{ code: 131026, title: 'Message undeliverable', error_data: { details: 'no WhatsApp' } }] });
    expect(custom.errors?.[0]?.code).toBe(131026);
    const payload = webhookPayload({ statuses: [failed] }) as { entry: { changes: { value: Record<string, unknown> }[] }[] };
    const value = payload.entry[0]!.changes[0]!.value;
    expect(value['statuses']).toEqual([failed]);
    expect(value).not.toHaveProperty('messages');
    expect(value).not.toHaveProperty('contacts');
  });

  it('builds an inbound SMS', () => {
    expect(inboundSms({ from: user, text: 'SI', at, id: 'sms-1' })).toEqual({ id: 'sms-1', from: user, to: SANDBOX_SENDER, text: 'SI', timestamp: '1700000000' });
  });
});

describe('signatures', () => {
  it('signs with sha256=<hex HMAC-SHA256(secret, raw body)>', () => {
    const raw = JSON.stringify({ a: 1 });
    expect(signBody('s3cret', raw)).toBe(`sha256=${createHmac('sha256', 's3cret').update(raw).digest('hex')}`);
  });

  it('verifies good signatures and rejects bad ones', () => {
    const raw = Buffer.from('{"x":"é"}');
    const sig = signBody('k', raw);
    expect(verifySignature('k', raw, sig)).toBe(true);
    expect(verifySignature('k', raw.toString('utf8'), sig)).toBe(true);
    expect(verifySignature('other', raw, sig)).toBe(false);
    expect(verifySignature('k', '{"x":"e"}', sig)).toBe(false);
    expect(verifySignature('k', raw, undefined)).toBe(false);
    expect(verifySignature('k', raw, 'sha256=00')).toBe(false);
  });
});
