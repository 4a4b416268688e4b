import { describe, expect, it } from 'vitest';
import { MessageValidationError } from '../../src/errors.js';
import { buttons, flow, FLOW_TOKEN_PLACEHOLDER, list, sms, text } from '../../src/messages/builders.js';
import { choicesOf, isInteractive } from '../../src/messages/message.js';
import { toInteractiveRequest } from '../../src/messages/request.js';
import { chars, pathsOf, seed, SEED_BUTTONS_DOCUMENT_JSON, SEED_BUTTONS_IMAGE_JSON, SEED_BUTTONS_VIDEO_JSON, SEED_FLOW_JSON, SEED_LIST_JSON, validationError } from './fixtures.js';

const addressing = { from: '5215512345678', to: '5215587654321' };
const BUTTONS = [
  { id: '1', title: 'Buy' },
  { id: '2', title: 'More info' },
  { id: '3', title: 'Talk to an agent' },
];
const messages = (e: MessageValidationError) => e.issues.map((i) => i.message);

describe('list()', () => {
  const seedRows = seed(SEED_LIST_JSON).listMessages.sections[0].messages as { id: string; title: string; description: string }[];

  it('builds the seed list message (sections)', () => {
    const m = list({
      header: 'Our products',
      body: 'Choose the product you want to know more about.',
      footer: 'Colloquy Store',
      button: 'See products',
      sections: [{ title: 'Products', rows: seedRows }],
    });
    expect(m.kind).toBe('list');
    expect(m.listMessages).toStrictEqual(seed(SEED_LIST_JSON).listMessages);
    expect(toInteractiveRequest(m, addressing)).toStrictEqual(seed(SEED_LIST_JSON));
  });

  it('builds a single untitled section from `rows`', () => {
    const m = list({
      body: 'Pick one',
      button: 'Open',
      rows: [
        { id: '1', title: 'One' },
        { id: '2', title: 'Two', description: 'The second' },
      ],
    });
    expect(m.listMessages).toStrictEqual({
      body: 'Pick one',
      buttonText: 'Open',
      sections: [
        {
          messages: [
            { id: '1', title: 'One' },
            { id: '2', title: 'Two', description: 'The second' },
          ],
        },
      ],
    });
    expect(Object.keys(m.listMessages)).toEqual(['body', 'buttonText', 'sections']);
    expect(m).not.toHaveProperty('sms');
  });

  it('builds several titled sections', () => {
    const m = list({
      body: 'Menu',
      button: 'Menu',
      sections: [
        { title: 'Drinks', rows: [{ id: 'd1', title: 'Coffee' }] },
        {
          title: 'Food',
          rows: [
            { id: 'f1', title: 'Bread' },
            { id: 'f2', title: 'Cake' },
          ],
        },
      ],
    });
    expect(m.listMessages.sections.map((s) => s.title)).toEqual(['Drinks', 'Food']);
    expect(choicesOf(m).map((c) => c.id)).toEqual(['d1', 'f1', 'f2']);
  });

  it('throws with seed-field paths', () => {
    const e = validationError(() => list({ body: 'b', button: 'Open', rows: [{ id: '1', title: chars(25) }] }));
    expect(e).toBeInstanceOf(MessageValidationError);
    expect(e.code).toBe('message_invalid');
    expect(e.issues).toEqual([{ path: ['listMessages', 'sections', 0, 'messages', 0, 'title'], message: 'must be at most 24 characters (has 25)' }]);
    expect(e.message).toContain('listMessages.sections[0].messages[0].title: must be at most 24 characters (has 25)');
  });

  it('lists every problem at once', () => {
    const e = validationError(() =>
      list({
        header: chars(61),
        body: '',
        button: chars(21),
        sections: [{ title: 'A', rows: [{ id: '1', title: 'One' }] }, { rows: [{ id: '1', title: 'Again', description: chars(73) }] }],
        sms: '',
      }),
    );
    expect(pathsOf(e.issues)).toEqual([
      'listMessages.headerText',
      'listMessages.body',
      'listMessages.buttonText',
      'listMessages.sections[1].messages[0].description',
      'listMessages.sections[1].title',
      'listMessages.sections[1].messages[0].id',
      'sms',
    ]);
    expect(e.message).toContain('(7 problems)');
  });

  it('refuses rows and sections together', () => {
    const e = validationError(() => list({ body: 'b', button: 'Open', rows: [{ id: '1', title: 'One' }], sections: [{ rows: [{ id: '2', title: 'Two' }] }] }));
    expect(e.issues).toEqual([{ path: ['listMessages', 'sections'], message: 'give either sections or rows, not both' }]);
  });

  it('refuses a list without rows', () => {
    expect(validationError(() => list({ body: 'b', button: 'Open' })).issues).toEqual([{ path: ['listMessages', 'sections'], message: 'a list needs at least one section' }]);
    expect(validationError(() => list({ body: 'b', button: 'Open', rows: [] })).issues).toEqual([{ path: ['listMessages', 'sections', 0, 'messages'], message: 'a section needs at least one row' }]);
  });

  it('10 rows pass, 11 fail', () => {
    const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(i + 1), title: `Row ${i + 1}` }));
    expect(list({ body: 'b', button: 'Open', rows: rows(10) }).listMessages.sections[0]?.messages).toHaveLength(10);
    expect(pathsOf(validationError(() => list({ body: 'b', button: 'Open', rows: rows(11) })).issues)).toEqual(['listMessages.sections']);
  });

  it('keeps an sms override, and checks it', () => {
    const m = list({ body: 'b', button: 'Open', rows: [{ id: '1', title: 'One' }], sms: 'Reply 1 for One' });
    expect(m.sms).toBe('Reply 1 for One');
    expect(validationError(() => list({ body: 'b', button: 'Open', rows: [{ id: '1', title: 'One' }], sms: '  ' })).issues).toEqual([{ path: ['sms'], message: 'must not be empty' }]);
  });
});

describe('buttons()', () => {
  it('builds the seed message with an image header', () => {
    const s = seed(SEED_BUTTONS_IMAGE_JSON);
    const m = buttons({ image: s.replyButtons.headerImage.link, body: s.replyButtons.body, footer: 'Colloquy Store', buttons: BUTTONS });
    expect(m.kind).toBe('buttons');
    expect(m.replyButtons).toStrictEqual(s.replyButtons);
    expect(toInteractiveRequest(m, addressing)).toStrictEqual(s);
  });

  it('builds the seed message with a video header', () => {
    const s = seed(SEED_BUTTONS_VIDEO_JSON);
    const m = buttons({ video: s.replyButtons.headerVideo.link, body: s.replyButtons.body, footer: 'Colloquy Store', buttons: BUTTONS });
    expect(toInteractiveRequest(m, addressing)).toStrictEqual(s);
  });

  it('builds the seed message with a document header and its file name', () => {
    const s = seed(SEED_BUTTONS_DOCUMENT_JSON);
    const m = buttons({
      document: { link: 'https://cdn.example.com/docs/catalog.pdf', fileName: 'catalog.pdf' },
      body: s.replyButtons.body,
      footer: 'Colloquy Store',
      buttons: BUTTONS,
    });
    expect(m.replyButtons.headerDocument).toStrictEqual({ link: 'https://cdn.example.com/docs/catalog.pdf', fileName: 'catalog.pdf' });
    expect(toInteractiveRequest(m, addressing)).toStrictEqual(s);
  });

  it('builds buttons without a header or footer', () => {
    const m = buttons({
      body: 'Yes or no?',
      buttons: [
        { id: 'y', title: 'Yes' },
        { id: 'n', title: 'No' },
      ],
    });
    expect(m.replyButtons).toStrictEqual({
      body: 'Yes or no?',
      buttons: [
        { id: 'y', title: 'Yes' },
        { id: 'n', title: 'No' },
      ],
    });
    expect(choicesOf(m)).toEqual([
      { id: 'y', title: 'Yes' },
      { id: 'n', title: 'No' },
    ]);
    expect(isInteractive(m)).toBe(true);
  });

  it('refuses two headers', () => {
    const e = validationError(() => buttons({ image: 'https://cdn.example.com/a.png', document: { link: 'https://cdn.example.com/a.pdf', fileName: 'a.pdf' }, body: 'b', buttons: BUTTONS }));
    expect(e.issues).toEqual([{ path: ['replyButtons', 'headerDocument'], message: 'only one header is allowed (also has headerImage)' }]);
  });

  it('throws with seed-field paths for media, buttons and texts', () => {
    const e = validationError(() =>
      buttons({
        video: 'http://cdn.example.com/v.mp4',
        body: chars(1025),
        footer: chars(61),
        buttons: [
          { id: '1', title: 'Same' },
          { id: '1', title: 'Same' },
          { id: chars(257), title: chars(21) },
        ],
      }),
    );
    expect(pathsOf(e.issues)).toEqual([
      'replyButtons.headerVideo.link',
      'replyButtons.body',
      'replyButtons.footer',
      'replyButtons.buttons[2].id',
      'replyButtons.buttons[2].title',
      'replyButtons.buttons[1].id',
      'replyButtons.buttons[1].title',
    ]);
    expect(messages(e)[0]).toBe('must be an https URL (got http)');
  });

  it('refuses 0 and 4 buttons', () => {
    expect(validationError(() => buttons({ body: 'b', buttons: [] })).issues).toEqual([{ path: ['replyButtons', 'buttons'], message: 'at least one button is required' }]);
    const four = [...BUTTONS, { id: '4', title: 'Four' }];
    expect(validationError(() => buttons({ body: 'b', buttons: four })).issues).toEqual([{ path: ['replyButtons', 'buttons'], message: 'at most 3 buttons are allowed (has 4)' }]);
  });

  it('refuses a wrong media type for the header', () => {
    expect(pathsOf(validationError(() => buttons({ image: 'https://cdn.example.com/a.webp', body: 'b', buttons: BUTTONS })).issues)).toEqual(['replyButtons.headerImage.link']);
    expect(pathsOf(validationError(() => buttons({ document: { link: 'https://cdn.example.com/a.zip', fileName: 'a.zip' }, body: 'b', buttons: BUTTONS })).issues)).toEqual([
      'replyButtons.headerDocument.link',
      'replyButtons.headerDocument.fileName',
    ]);
  });
});

describe('flow()', () => {
  const base = { body: 'Order your coffee in a few taps.', flowId: '1234567890123456', cta: 'Order now', screen: 'PRODUCT_SCREEN' };
  const data = { product_name: 'Coffee', product_description: 'Ground coffee, 500 g', product_price: 129.5 };

  it('builds the seed flow message, the placeholder token replaced by toInteractiveRequest', () => {
    const m = flow({ ...base, data });
    expect(m.kind).toBe('flow');
    expect(m.flow.action.parameters.flow_token).toBe(FLOW_TOKEN_PLACEHOLDER);
    const req = toInteractiveRequest(m, { ...addressing, flowToken: 'FLOW_TOKEN_5215587654321' });
    expect(req).toStrictEqual(seed(SEED_FLOW_JSON));
    // The message itself is not changed.
    expect(m.flow.action.parameters.flow_token).toBe(FLOW_TOKEN_PLACEHOLDER);
  });

  it('defaults to draft, version "3", navigate', () => {
    const p = flow(base).flow.action.parameters;
    expect(p).toStrictEqual({
      mode: 'draft',
      flow_message_version: '3',
      flow_id: base.flowId,
      flow_token: FLOW_TOKEN_PLACEHOLDER,
      flow_cta: 'Order now',
      flow_action: 'navigate',
      flow_action_payload: { screen: 'PRODUCT_SCREEN' },
    });
  });

  it('takes published mode and an explicit token', () => {
    const p = flow({ ...base, mode: 'published', token: 'tok-1' }).flow.action.parameters;
    expect(p.mode).toBe('published');
    expect(p.flow_token).toBe('tok-1');
  });

  it('data_exchange has no payload', () => {
    const p = flow({ body: 'b', flowId: '1', cta: 'Start', action: 'data_exchange' }).flow.action.parameters;
    expect(p.flow_action).toBe('data_exchange');
    expect(p).not.toHaveProperty('flow_action_payload');
  });

  it('refuses a screen or data with data_exchange rather than dropping them', () => {
    const e = validationError(() => flow({ ...base, data, action: 'data_exchange' }));
    expect(e.issues).toEqual([{ path: ['flow', 'action', 'parameters', 'flow_action_payload'], message: 'screen and data apply only to flow_action "navigate" (got "data_exchange")' }]);
  });

  it('navigate needs a screen', () => {
    const { screen: _, ...noScreen } = base;
    expect(pathsOf(validationError(() => flow(noScreen)).issues)).toEqual(['flow.action.parameters.flow_action_payload.screen']);
  });

  it('checks the cta: 20 characters, no emoji', () => {
    expect(flow({ ...base, cta: chars(20) }).flow.action.parameters.flow_cta).toHaveLength(20);
    expect(validationError(() => flow({ ...base, cta: chars(21) })).issues).toEqual([{ path: ['flow', 'action', 'parameters', 'flow_cta'], message: 'must be at most 20 characters (has 21)' }]);
    expect(validationError(() => flow({ ...base, cta: 'Order ☕' })).issues).toEqual([{ path: ['flow', 'action', 'parameters', 'flow_cta'], message: 'must not contain emoji' }]);
  });

  it('lists every problem with its path', () => {
    const e = validationError(() => flow({ body: '', flowId: '', cta: '🚀', screen: '' }));
    expect(pathsOf(e.issues)).toEqual(['flow.body', 'flow.action.parameters.flow_id', 'flow.action.parameters.flow_cta', 'flow.action.parameters.flow_action_payload.screen']);
  });

  it('has no choices', () => {
    expect(choicesOf(flow(base))).toEqual([]);
  });
});

describe('text() and sms()', () => {
  it('build plain messages', () => {
    expect(text('Hello')).toStrictEqual({ kind: 'text', text: 'Hello' });
    expect(sms('Your code is 1234')).toStrictEqual({ kind: 'sms', text: 'Your code is 1234' });
    expect(isInteractive(text('Hello'))).toBe(false);
    expect(choicesOf(sms('x'))).toEqual([]);
  });

  it('text: 4096 characters pass, 4097 fail; counted in code points', () => {
    expect(text(chars(4096)).text).toHaveLength(4096);
    expect(text(chars(4096, '😀')).text).toHaveLength(8192);
    expect(validationError(() => text(chars(4097))).issues).toEqual([{ path: ['text'], message: 'must be at most 4096 characters (has 4097)' }]);
  });

  it('sms: 1600 characters pass, 1601 fail', () => {
    expect(sms(chars(1600)).text).toHaveLength(1600);
    expect(validationError(() => sms(chars(1601))).issues).toEqual([{ path: ['sms'], message: 'must be at most 1600 characters (has 1601)' }]);
  });

  it('refuse empty and blank texts', () => {
    expect(validationError(() => text('')).issues).toEqual([{ path: ['text'], message: 'must not be empty' }]);
    expect(validationError(() => text(' \n\t')).issues).toEqual([{ path: ['text'], message: 'must not be empty' }]);
    expect(validationError(() => sms('')).issues).toEqual([{ path: ['sms'], message: 'must not be empty' }]);
  });

  it('refuse a non-string (from untyped bot code)', () => {
    expect(validationError(() => text(42 as unknown as string)).issues).toEqual([{ path: ['text'], message: 'must be a string (got number)' }]);
  });
});
