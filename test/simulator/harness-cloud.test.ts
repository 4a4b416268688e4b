import { describe, expect, it } from 'vitest';
import { buttons, flow, list, text } from '../../src/messages/index.js';
import type { Message, TemplateMessage } from '../../src/messages/message.js';
import type { AcceptedCloud, AcceptedSms } from '../../src/sandbox/types.js';
import { cloudMessage } from '../../src/simulator/harness-cloud.js';
import { isTappableSent, toSent, type SentMessage } from '../../src/simulator/harness-sent.js';
import { readableText } from '../../src/simulator/harness-expect.js';
import { renderSent } from '../../src/simulator/render.js';
import { sentLine } from '../../src/simulator/transcript-lines.js';
import type { OutboxRecord } from '../../src/store/types.js';

const USER = '15551230001';

function accepted(request: Record<string, unknown>, type: string, seq = 1): AcceptedCloud {
  return {
    seq,
    channel: 'cloud-api',
    numberId: '1098765',
    from: '15550000001',
    to: USER,
    type,
    request: { messaging_product: 'whatsapp', recipient_type: 'individual', to: USER, ...request },
    providerId: `wamid.c${seq}`,
    at: 0,
  };
}

function row(message: Message | undefined, extra: Partial<OutboxRecord> = {}): OutboxRecord {
  return {
    id: 7,
    botId: 'b',
    user: USER,
    conversationId: 1,
    inboxId: null,
    kind: message?.kind ?? 'text',
    message,
    channel: 'interactive',
    request: {},
    state: 'sent',
    attempts: 1,
    nextAttemptAt: 0,
    providerId: 'wamid.c1',
    httpStatus: 200,
    response: null,
    smsCode: null,
    smsMailingId: null,
    smsResult: null,
    error: null,
    errorCode: null,
    fallbackOf: null,
    deliveryStatus: null,
    claim: null,
    resends: 0,
    createdAt: 0,
    sentAt: 0,
    ...extra,
  } as OutboxRecord;
}

// Built as a literal: the template() builder's schema cannot be built yet (two `button` entries in a discriminated union).
const reminder: TemplateMessage = {
  kind: 'template',
  template: {
    name: 'appointment_reminder',
    language: { code: 'en_US' },
    components: [
      { type: 'header', parameters: [{ type: 'image', image: { link: 'https://example.com/a.png' } }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'Tuesday 10:00' },
          { type: 'currency', currency: { fallback_value: '$12.50', code: 'USD', amount_1000: 12500 } },
        ],
      },
      { type: 'button', sub_type: 'quick_reply', index: '1', parameters: [{ type: 'payload', payload: 'cancel' }] },
      { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'confirm' }] },
    ],
  },
};

const cloudList = {
  type: 'interactive',
  interactive: {
    type: 'list',
    header: { type: 'text', text: 'Menu' },
    body: { text: 'Pick one' },
    footer: { text: 'Prices with tax' },
    action: {
      button: 'Choose',
      sections: [
        {
          title: 'Pizzas',
          rows: [
            { id: 'm', title: 'Margherita', description: 'Tomato' },
            { id: 'p', title: 'Pepperoni' },
          ],
        },
      ],
    },
  },
};
const cloudButtons = {
  type: 'interactive',
  interactive: {
    type: 'button',
    header: { type: 'document', document: { link: 'https://example.com/menu.pdf', filename: 'menu.pdf' } },
    body: { text: 'Shall we?' },
    action: {
      buttons: [
        { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
        { type: 'reply', reply: { id: 'no', title: 'No' } },
      ],
    },
  },
};
const cloudFlow = {
  type: 'interactive',
  interactive: {
    type: 'flow',
    body: { text: 'Your address' },
    action: {
      name: 'flow',
      parameters: { flow_message_version: '3', flow_token: 'tok-123', flow_id: '999', flow_cta: 'Open form', flow_action: 'navigate', flow_action_payload: { screen: 'ADDRESS' } },
    },
  },
};

describe('the harness reads Cloud API messages', () => {
  it('reads text as a WhatsApp text: kind text on the interactive channel, not an SMS', () => {
    const s = toSent(accepted({ type: 'text', text: { body: 'Hello there' } }, 'text'), row(text('Hello there')));
    expect(s).toMatchObject({ kind: 'text', channel: 'interactive', text: 'Hello there', providerId: 'wamid.c1', fallback: false, choices: [] });
    expect(sentLine(s)).toBe('text "Hello there"');
    expect(renderSent(s)).toBe('bot › Hello there');
    expect(isTappableSent(s)).toBe(false);
  });

  it('reads a template: name, language, header and body parameters, quick replies in button order', () => {
    const s = toSent(accepted({ type: 'template', template: reminder.template }, 'template'), row(reminder));
    expect(s).toMatchObject({
      kind: 'template',
      channel: 'interactive',
      name: 'appointment_reminder',
      language: 'en_US',
      parameters: ['Tuesday 10:00', '$12.50'],
      headerParameters: ['[image https://example.com/a.png]'],
      choices: [
        { id: 'confirm', title: 'confirm' },
        { id: 'cancel', title: 'cancel' },
      ],
    });
    expect(isTappableSent(s)).toBe(true);
    expect(readableText(s)).toContain('Tuesday 10:00');
    expect(sentLine(s)).toBe('template appointment_reminder language=en_US header=["[image https://example.com/a.png]"] body=["Tuesday 10:00", "$12.50"] replies=[confirm, cancel]');
    expect(renderSent(s).split('\n')).toEqual([
      'bot › [template appointment_reminder (en_US)] [image https://example.com/a.png] · Tuesday 10:00 · $12.50',
      '      1. [ confirm ]',
      '      2. [ cancel ]',
    ]);
  });

  it("shows a template as the user sees it when the sandbox knows it: its buttons' texts, payloads as ids", () => {
    const known = { name: 'colloquy_reminder', language: { code: 'en' }, components: [{ type: 'body' as const, parameters: [{ type: 'text' as const, text: 'your table at 8' }] }] };
    const rendered = { body: 'Reminder: your table at 8', footer: 'Reply OK', buttons: [{ text: 'OK', payload: 'OK' }] };
    const s = toSent(accepted({ type: 'template', template: known }, 'template'), undefined, (m) => (m.type === 'template' ? rendered : undefined));
    expect(s).toMatchObject({ kind: 'template', name: 'colloquy_reminder', parameters: ['your table at 8'], rendered, choices: [{ id: 'OK', title: 'OK' }] });
    expect(readableText(s)).toContain('Reminder: your table at 8');
    expect(renderSent(s).split('\n')).toEqual(['bot › [template colloquy_reminder (en)]', '      Reminder: your table at 8', '      Reply OK', '      1. [ OK ]']);
  });

  it('reads list, buttons and flow into the same kinds and fields as the seed provider, from the row', () => {
    const l = list({
      header: 'Menu',
      body: 'Pick one',
      footer: 'Prices with tax',
      button: 'Choose',
      sections: [
        {
          title: 'Pizzas',
          rows: [
            { id: 'm', title: 'Margherita', description: 'Tomato' },
            { id: 'p', title: 'Pepperoni' },
          ],
        },
      ],
    });
    const s = toSent(accepted(cloudList, 'interactive:list'), row(l));
    expect(s).toMatchObject({ kind: 'list', channel: 'interactive', listMessages: l.listMessages, message: l });
    expect(s.choices.map((c) => c.id)).toEqual(['m', 'p']);

    const b = buttons({
      body: 'Shall we?',
      document: { link: 'https://example.com/menu.pdf', fileName: 'menu.pdf' },
      buttons: [
        { id: 'yes', title: 'Yes' },
        { id: 'no', title: 'No' },
      ],
    });
    expect(toSent(accepted(cloudButtons, 'interactive:button'), row(b))).toMatchObject({ kind: 'buttons', replyButtons: { ...b.replyButtons, headerDocument: { fileName: 'menu.pdf' } } });

    const f = flow({ body: 'Your address', flowId: '999', cta: 'Open form', screen: 'ADDRESS' });
    const sf = toSent(accepted(cloudFlow, 'interactive:flow'), row(f)) as Extract<SentMessage, { kind: 'flow' }>;
    expect(sf.kind).toBe('flow');
    expect(sf.flow.action.parameters).toMatchObject({ flow_id: '999', flow_cta: 'Open form', flow_token: 'tok-123', flow_action_payload: { screen: 'ADDRESS' } });
  });

  it('without a row, reads the Cloud body back into the seed shapes', () => {
    const s = toSent(accepted(cloudList, 'interactive:list'), undefined);
    expect(s).toMatchObject({
      kind: 'list',
      listMessages: {
        headerText: 'Menu',
        body: 'Pick one',
        footer: 'Prices with tax',
        buttonText: 'Choose',
        sections: [
          {
            title: 'Pizzas',
            messages: [
              { id: 'm', title: 'Margherita', description: 'Tomato' },
              { id: 'p', title: 'Pepperoni' },
            ],
          },
        ],
      },
    });
    expect(toSent(accepted(cloudButtons, 'interactive:button'), undefined)).toMatchObject({
      kind: 'buttons',
      replyButtons: {
        headerDocument: { link: 'https://example.com/menu.pdf', fileName: 'menu.pdf' },
        body: 'Shall we?',
        buttons: [
          { id: 'yes', title: 'Yes' },
          { id: 'no', title: 'No' },
        ],
      },
    });
    expect(toSent(accepted(cloudFlow, 'interactive:flow'), undefined)).toMatchObject({
      kind: 'flow',
      flow: { body: 'Your address', action: { name: 'flow', parameters: { flow_id: '999', flow_token: 'tok-123', flow_cta: 'Open form', flow_action: 'navigate', mode: 'published' } } },
    });
    expect(toSent(accepted({ type: 'text', text: { body: 'Hi' } }, 'text'), undefined)).toMatchObject({ kind: 'text', channel: 'interactive', text: 'Hi' });
    expect(toSent(accepted({ type: 'template', template: { name: 'hello', language: { code: 'en' } } }, 'template'), undefined)).toMatchObject({
      kind: 'template',
      name: 'hello',
      language: 'en',
      parameters: [],
      choices: [],
    });
  });

  it('trusts the body when the row holds another kind (a window policy sent a template instead of the text)', () => {
    const s = toSent(accepted({ type: 'template', template: reminder.template }, 'template'), row(text('Your table is ready')));
    expect(s).toMatchObject({ kind: 'template', name: 'appointment_reminder' });
  });

  it('carries the row: the agent who wrote it', () => {
    expect(toSent(accepted({ type: 'text', text: { body: 'Ana here' } }, 'text'), row(text('Ana here'), { agent: 'ana' }))).toMatchObject({ kind: 'text', agent: 'ana' });
  });

  it('reads a template that went by SMS as a template with its SMS text', () => {
    const sms: AcceptedSms = {
      seq: 3,
      channel: 'sms',
      to: USER,
      text: 'Reminder: Tuesday 10:00',
      request: { msisdns: [USER], message: 'Reminder: Tuesday 10:00' },
      providerId: '42',
      mailingId: 42,
      at: 0,
    };
    const s = toSent(sms, row(reminder, { channel: 'sms', fallbackOf: 6 }));
    expect(s).toMatchObject({ kind: 'template', channel: 'sms', text: 'Reminder: Tuesday 10:00', fallback: true });
    expect(renderSent(s)).toBe('SMS › Reminder: Tuesday 10:00\n      (by SMS instead of a template that could not be delivered)');
  });

  it('says which body it cannot read', () => {
    expect(() => cloudMessage({ messaging_product: 'whatsapp', type: 'reaction' })).toThrow(/type "reaction" cannot be read/);
  });
});
