/** Provider messages to bot events, and the schema's verdicts, without HTTP. */
import { describe, expect, it } from 'vitest';
import { buttonReplyMessage, flowReplyMessage, imageMessage, inboundSms, listReplyMessage, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import { eventOf, smsEventOf } from '../../src/webhook/events.js';
import { digitsOf } from '../../src/webhook/index.js';
import { envelopeSchema, messageSchema, parseResponseJson, smsSchema } from '../../src/webhook/schema.js';

const USER = '5215512345678';
const parsed = (m: unknown) => messageSchema.parse(m);

describe('eventOf', () => {
  it('maps text, taps, flows and other types', () => {
    expect(eventOf(parsed(textMessage({ from: USER, text: 'hola' })))).toEqual({ type: 'text', text: 'hola', via: 'whatsapp' });
    expect(eventOf(parsed(buttonReplyMessage({ from: USER, buttonId: 'small', title: 'Small' })))).toEqual({ type: 'reply.small', id: 'small', title: 'Small', via: 'button' });
    expect(eventOf(parsed(listReplyMessage({ from: USER, rowId: 'pepperoni', title: 'Pepperoni', description: 'Hot' })))).toEqual({
      type: 'reply.pepperoni',
      id: 'pepperoni',
      title: 'Pepperoni',
      via: 'list',
    });
    expect(eventOf(parsed(flowReplyMessage({ from: USER, flowToken: 'tok-1', data: { address: '1 Main St', floor: 2 } })))).toEqual({
      type: 'flow',
      token: 'tok-1',
      data: { address: '1 Main St', floor: 2 },
    });
    const quickReply = { from: USER, id: 'wamid.qr', timestamp: '1700000000', type: 'button', context: { id: 'wamid.template' }, button: { payload: 'yes', text: 'Yes' } };
    expect(eventOf(parsed(quickReply))).toEqual({ type: 'reply.yes', id: 'yes', title: 'Yes', via: 'template' });
    const { text: _text, ...noText } = quickReply.button;
    expect(eventOf(parsed({ ...quickReply, button: noText }))).toEqual({ type: 'reply.yes', id: 'yes', title: 'yes', via: 'template' });
    expect(eventOf(parsed(imageMessage({ from: USER })))).toEqual({ type: 'unsupported', messageType: 'image' });
    const location = { from: USER, id: 'wamid.loc', timestamp: '1700000000', type: 'location', location: { latitude: 19.4, longitude: -99.1 } };
    expect(eventOf(parsed(location))).toEqual({ type: 'unsupported', messageType: 'location' });
    const product = { ...textMessage({ from: USER, text: '' }), type: 'interactive', interactive: { type: 'product_reply' } };
    expect(eventOf(parsed(product))).toEqual({ type: 'unsupported', messageType: 'interactive.product_reply' });
  });

  it('maps an SMS to text via sms', () => {
    expect(smsEventOf(smsSchema.parse(inboundSms({ from: USER, text: '2' })))).toEqual({ type: 'text', text: '2', via: 'sms' });
  });
});

describe('schema', () => {
  it('accepts what the sandbox sends, keeping unknown fields', () => {
    const body = webhookPayload({ messages: [textMessage({ from: USER, text: 'x' })] });
    const r = envelopeSchema.parse({ ...body, extra: true });
    expect(r).toMatchObject({ extra: true });
  });

  it('reports issues at their paths', () => {
    const r = messageSchema.safeParse({ ...listReplyMessage({ from: USER, rowId: 'a', title: 'A' }), interactive: { type: 'list_reply', list_reply: { title: 3 } } });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['interactive.list_reply.id', 'interactive.list_reply.title']);
  });

  it('parses response_json', () => {
    expect(parseResponseJson('{"flow_token":"t","a":1}')).toEqual({ token: 't', data: { a: 1 } });
    expect(parseResponseJson('{')).toMatch(/not valid JSON/);
    expect(parseResponseJson('"x"')).toMatch(/object/);
    expect(parseResponseJson('{"flow_token":1}')).toMatch(/flow_token/);
  });

  it('normalizes numbers to digits', () => {
    expect(digitsOf('+52 55 1234-5678')).toBe('525512345678');
  });
});
