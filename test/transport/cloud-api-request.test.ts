import { afterAll, describe, expect, it } from 'vitest';
import { MessageValidationError, formatPath } from '../../src/errors.js';
import { FLOW_TOKEN_PLACEHOLDER, buttons, flow, list, sms, template, text, type Message } from '../../src/messages/index.js';
import { createCloudApiProvider, type ProviderAddress } from '../../src/transport/index.js';

const provider = createCloudApiProvider({ baseUrl: 'http://127.0.0.1:9/v23.0', token: 'unused-token' });
afterAll(() => provider.close());

const to = '5215511111111';
const address: ProviderAddress = { to, from: '5215500000000', flowToken: 'conv-42-token' };
const envelope = { messaging_product: 'whatsapp', recipient_type: 'individual', to };

/** The issues of the MessageValidationError that `request` throws, as `path: message`. */
function issuesOf(message: Message, a: ProviderAddress = address): string[] {
  try {
    provider.request(message, a);
  } catch (e) {
    expect(e).toBeInstanceOf(MessageValidationError);
    return (e as MessageValidationError).issues.map((i) => `${formatPath(i.path)}: ${i.message}`);
  }
  throw new Error('expected request() to throw');
}

describe('Cloud API request(): the bodies', () => {
  it('text', () => {
    expect(provider.request(text('Your order is on its way'), address)).toEqual({ ...envelope, type: 'text', text: { body: 'Your order is on its way' } });
  });

  it('a list with header, footer, two titled sections and a description', () => {
    const m = list({
      header: 'Menu',
      body: 'What would you like?',
      footer: 'Prices include tax',
      button: 'See options',
      sections: [
        { title: 'Pizza', rows: [{ id: 'margherita', title: 'Margherita', description: 'Tomato, mozzarella' }] },
        { title: 'Drinks', rows: [{ id: 'cola', title: 'Cola' }] },
      ],
    });
    expect(provider.request(m, address)).toEqual({
      ...envelope,
      type: 'interactive',
      interactive: {
        type: 'list',
        header: { type: 'text', text: 'Menu' },
        body: { text: 'What would you like?' },
        footer: { text: 'Prices include tax' },
        action: {
          button: 'See options',
          sections: [
            { title: 'Pizza', rows: [{ id: 'margherita', title: 'Margherita', description: 'Tomato, mozzarella' }] },
            { title: 'Drinks', rows: [{ id: 'cola', title: 'Cola' }] },
          ],
        },
      },
    });
  });

  const replies = [
    { type: 'reply', reply: { id: 'yes', title: 'Yes' } },
    { type: 'reply', reply: { id: 'no', title: 'No' } },
  ];
  it.each([
    ['no header', {}, undefined],
    ['an image header', { image: 'https://cdn.example.com/pizza.png' }, { type: 'image', image: { link: 'https://cdn.example.com/pizza.png' } }],
    ['a video header', { video: 'https://cdn.example.com/tour.mp4' }, { type: 'video', video: { link: 'https://cdn.example.com/tour.mp4' } }],
    [
      'a document header',
      { document: { link: 'https://cdn.example.com/menu.pdf', fileName: 'menu.pdf' } },
      { type: 'document', document: { link: 'https://cdn.example.com/menu.pdf', filename: 'menu.pdf' } },
    ],
  ])('reply buttons with %s', (_, header, expected) => {
    const m = buttons({
      ...header,
      body: 'Confirm?',
      footer: 'Reply below',
      buttons: [
        { id: 'yes', title: 'Yes' },
        { id: 'no', title: 'No' },
      ],
    });
    expect(provider.request(m, address)).toEqual({
      ...envelope,
      type: 'interactive',
      interactive: { type: 'button', ...(expected && { header: expected }), body: { text: 'Confirm?' }, footer: { text: 'Reply below' }, action: { buttons: replies } },
    });
  });

  it('a navigate flow gets the conversation\u2019s token in place of the placeholder', () => {
    const m = flow({ body: 'Book a table', flowId: '1234567890', cta: 'Book', screen: 'BOOKING', data: { party: 2 }, mode: 'published' });
    expect(m.flow.action.parameters.flow_token).toBe(FLOW_TOKEN_PLACEHOLDER);
    expect(provider.request(m, address)).toEqual({
      ...envelope,
      type: 'interactive',
      interactive: {
        type: 'flow',
        body: { text: 'Book a table' },
        action: {
          name: 'flow',
          parameters: {
            flow_message_version: '3',
            flow_token: 'conv-42-token',
            flow_id: '1234567890',
            flow_cta: 'Book',
            flow_action: 'navigate',
            flow_action_payload: { screen: 'BOOKING', data: { party: 2 } },
            mode: 'published',
          },
        },
      },
    });
  });

  it('a data_exchange flow has no payload, and keeps a token of its own', () => {
    const m = flow({ body: 'Sign up', flowId: '99', cta: 'Start', action: 'data_exchange', token: 'own-token' });
    expect(provider.request(m, { to, from: '5215500000000' })).toMatchObject({
      interactive: {
        type: 'flow',
        action: { name: 'flow', parameters: { flow_message_version: '3', flow_token: 'own-token', flow_id: '99', flow_cta: 'Start', flow_action: 'data_exchange', mode: 'draft' } },
      },
    });
    const params = (provider.request(m, address) as { interactive: { action: { parameters: object } } }).interactive.action.parameters;
    expect(params).not.toHaveProperty('flow_action_payload');
  });

  it('a flow left with the placeholder and no conversation token is refused, naming flow_token', () => {
    const m = flow({ body: 'Book', flowId: '1', cta: 'Book', screen: 'A' });
    expect(issuesOf(m, { to, from: '5215500000000' })).toEqual(['interactive.action.parameters.flow_token: no flow token: pass one, or send the flow from a conversation']);
  });

  it('a template', () => {
    const m = template({
      name: 'order_ready',
      language: 'en_US',
      components: [
        { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
        { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'pickup' }] },
      ],
    });
    expect(provider.request(m, address)).toEqual({
      ...envelope,
      type: 'template',
      template: {
        name: 'order_ready',
        language: { code: 'en_US' },
        components: [
          { type: 'body', parameters: [{ type: 'text', text: 'Ana' }] },
          { type: 'button', sub_type: 'quick_reply', index: '0', parameters: [{ type: 'payload', payload: 'pickup' }] },
        ],
      },
    });
  });

  it('an SMS message has no Cloud API body', () => {
    expect(issuesOf(sms('hello'))).toEqual(['kind: a "sms" message has no Cloud API body: it goes by SMS']);
  });
});

/** A list message as a bot could hold it without the builders (which check the seed's limits first). */
function rawList(rows: { id: string; title: string; description?: string }[], extra: Record<string, unknown> = {}): Message {
  return { kind: 'list', listMessages: { body: 'Pick', buttonText: 'Open', sections: [{ messages: rows }], ...extra } } as Message;
}
function rawButtons(body: string, ids: string[]): Message {
  return { kind: 'buttons', replyButtons: { body, buttons: ids.map((id) => ({ id, title: id.toUpperCase() })) } } as Message;
}

describe('Cloud API request(): Meta\u2019s limits, each issue naming its field', () => {
  it('a row title of 25 characters', () => {
    expect(issuesOf(rawList([{ id: 'a', title: 'x'.repeat(25) }]))).toEqual(['interactive.action.sections[0].rows[0].title: must be at most 24 characters (has 25)']);
  });

  it('four buttons', () => {
    expect(issuesOf(rawButtons('Pick', ['a', 'b', 'c', 'd']))).toEqual(['interactive.action.buttons: at most 3 buttons are allowed (has 4)']);
  });

  it('a button body of 1,025 characters, and a list body of 4,097', () => {
    expect(issuesOf(rawButtons('y'.repeat(1025), ['a']))).toEqual(['interactive.body.text: must be at most 1024 characters (has 1025)']);
    expect(issuesOf(rawList([{ id: 'a', title: 'A' }], { body: 'z'.repeat(4097) }))).toEqual(['interactive.body.text: must be at most 4096 characters (has 4097)']);
  });

  it('every problem at once: row id, description, header, footer, button label, duplicate ids', () => {
    const m = rawList(
      [
        { id: 'i'.repeat(201), title: 'A', description: 'd'.repeat(73) },
        { id: 'dup', title: 'B' },
        { id: 'dup', title: 'C' },
      ],
      { headerText: 'h'.repeat(61), footer: 'f'.repeat(61), buttonText: 'b'.repeat(21) },
    );
    expect(issuesOf(m).sort()).toEqual(
      [
        'interactive.action.button: must be at most 20 characters (has 21)',
        'interactive.action.sections[0].rows[0].description: must be at most 72 characters (has 73)',
        'interactive.action.sections[0].rows[0].id: must be at most 200 characters (has 201)',
        'interactive.action.sections[0].rows[2].id: duplicate row id "dup"',
        'interactive.footer.text: must be at most 60 characters (has 61)',
        'interactive.header.text: must be at most 60 characters (has 61)',
      ].sort(),
    );
  });

  it('eleven rows, and two sections without titles', () => {
    const rows = Array.from({ length: 11 }, (_, i) => ({ id: `r${i}`, title: `Row ${i}` }));
    expect(issuesOf(rawList(rows))).toEqual(['interactive.action.sections: a list has at most 10 rows in all sections (has 11)']);
    const two = { kind: 'list', listMessages: { body: 'Pick', buttonText: 'Open', sections: [{ messages: [{ id: 'a', title: 'A' }] }, { messages: [{ id: 'b', title: 'B' }] }] } } as Message;
    expect(issuesOf(two)).toEqual([
      'interactive.action.sections[0].title: is required when a list has more than one section',
      'interactive.action.sections[1].title: is required when a list has more than one section',
    ]);
  });

  it('a button id of 257 characters, a title of 21, duplicate titles', () => {
    const m = {
      kind: 'buttons',
      replyButtons: {
        body: 'Pick',
        buttons: [
          { id: 'k'.repeat(257), title: 't'.repeat(21) },
          { id: 'b', title: 'Same' },
          { id: 'c', title: 'Same' },
        ],
      },
    } as Message;
    expect(issuesOf(m).sort()).toEqual(
      [
        'interactive.action.buttons[0].reply.id: must be at most 256 characters (has 257)',
        'interactive.action.buttons[0].reply.title: must be at most 20 characters (has 21)',
        'interactive.action.buttons[2].reply.title: duplicate button title "Same"',
      ].sort(),
    );
  });

  it('text over 4,096 characters, an emoji in a flow\u2019s CTA, an empty flow data object', () => {
    expect(issuesOf({ kind: 'text', text: 'w'.repeat(4097) })).toEqual(['text.body: must be at most 4096 characters (has 4097)']);
    const base = flow({ body: 'b', flowId: '1', cta: 'Go', screen: 'S' });
    const p = base.flow.action.parameters;
    const bad = { ...base, flow: { ...base.flow, action: { ...base.flow.action, parameters: { ...p, flow_cta: 'Go 🚀', flow_action_payload: { screen: 'S', data: {} } } } } } as Message;
    expect(issuesOf(bad).sort()).toEqual([
      'interactive.action.parameters.flow_action_payload.data: must be left out rather than empty',
      'interactive.action.parameters.flow_cta: must not contain emoji',
    ]);
  });

  it('a recipient that is not digits', () => {
    expect(issuesOf(text('hi'), { to: '+52 155', from: '1' })).toEqual(['to: must be digits only (country code and number, no "+"), 6 to 20 of them']);
  });
});
