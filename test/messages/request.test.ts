import { describe, expect, it } from 'vitest';
import { MessageValidationError } from '../../src/errors.js';
import { buttons, flow, FLOW_TOKEN_PLACEHOLDER, list, sms, text } from '../../src/messages/builders.js';
import { fromSeedJson, toInteractiveRequest, toSmsRequest, variantOf } from '../../src/messages/request.js';
import { SmsRequestSchema } from '../../src/messages/schema.js';
import {
  chars,
  issuesOf,
  pathsOf,
  seed,
  SEED_BUTTONS_DOCUMENT_JSON,
  SEED_BUTTONS_IMAGE_JSON,
  SEED_BUTTONS_VIDEO_JSON,
  SEED_FLOW_JSON,
  SEED_LIST_JSON,
  SEED_VARIANTS,
  validationError,
} from './fixtures.js';

const addressing = { from: '5215512345678', to: '5215587654321' };
const aList = list({ body: 'Pick one', button: 'Open', rows: [{ id: '1', title: 'One' }] });
const someButtons = buttons({ body: 'Yes?', buttons: [{ id: 'y', title: 'Yes' }] });
const aFlow = flow({ body: 'Fill in the form', flowId: '42', cta: 'Start', screen: 'FIRST' });

describe('toInteractiveRequest', () => {
  it('wraps a list in the envelope with type "contacts"', () => {
    expect(toInteractiveRequest(aList, addressing)).toStrictEqual({ ...addressing, type: 'contacts', listMessages: aList.listMessages });
  });

  it('wraps reply buttons and flows with type "interactive"', () => {
    expect(toInteractiveRequest(someButtons, addressing)).toStrictEqual({ ...addressing, type: 'interactive', replyButtons: someButtons.replyButtons });
    const req = toInteractiveRequest(aFlow, { ...addressing, flowToken: 'conv-7' });
    expect(req.type).toBe('interactive');
    expect(Object.keys(req)).toEqual(['from', 'to', 'type', 'flow']);
  });

  it('leaves the sms override out of the request', () => {
    const m = list({ body: 'b', button: 'Open', rows: [{ id: '1', title: 'One' }], sms: 'Reply 1' });
    expect(JSON.stringify(toInteractiveRequest(m, addressing))).not.toContain('Reply 1');
  });

  it('refuses numbers that are not digits only', () => {
    const e = validationError(() => toInteractiveRequest(aList, { from: '+5215512345678', to: '5215587654321' }));
    expect(pathsOf(e.issues)).toEqual(['from']);
    expect(e.issues[0]!.message).toContain('digits only');
    expect(pathsOf(validationError(() => toInteractiveRequest(someButtons, { from: '5215512345678', to: '55-8765-4321' })).issues)).toEqual(['to']);
  });

  it("replaces a flow's placeholder token with the conversation's", () => {
    const req = toInteractiveRequest(aFlow, { ...addressing, flowToken: 'conv-7' });
    expect(req.flow?.action.parameters.flow_token).toBe('conv-7');
    expect(aFlow.flow.action.parameters.flow_token).toBe(FLOW_TOKEN_PLACEHOLDER);
  });

  it('keeps a token the author set', () => {
    const m = flow({ body: 'b', flowId: '42', cta: 'Start', screen: 'FIRST', token: 'mine' });
    expect(toInteractiveRequest(m, { ...addressing, flowToken: 'conv-7' }).flow?.action.parameters.flow_token).toBe('mine');
    expect(toInteractiveRequest(m, addressing).flow?.action.parameters.flow_token).toBe('mine');
  });

  it('refuses a placeholder token with no flow token to put in, together with other problems', () => {
    expect(validationError(() => toInteractiveRequest(aFlow, addressing)).issues).toEqual([
      { path: ['flow', 'action', 'parameters', 'flow_token'], message: 'no flow token: pass one, or send the flow from a conversation' },
    ]);
    const e = validationError(() => toInteractiveRequest(aFlow, { from: '+52', to: '5215587654321' }));
    expect(pathsOf(e.issues)).toEqual(['flow.action.parameters.flow_token', 'from']);
  });

  it('re-validates a message that was not built by a builder', () => {
    const bad = {
      kind: 'buttons' as const,
      replyButtons: {
        body: 'b',
        buttons: [
          { id: '1', title: 'A' },
          { id: '1', title: 'B' },
        ],
      },
    };
    expect(pathsOf(validationError(() => toInteractiveRequest(bad, addressing)).issues)).toEqual(['replyButtons.buttons[1].id']);
  });
});

describe('toSmsRequest', () => {
  it('puts the recipient in msisdns, and nothing optional unless given', () => {
    const req = toSmsRequest('Hello', { to: '5215587654321' });
    expect(req).toStrictEqual({ msisdns: ['5215587654321'], message: 'Hello' });
    expect(Object.keys(req)).toEqual(['msisdns', 'message']);
  });

  it('takes tag, country, dial and mask', () => {
    expect(toSmsRequest('Hello', { to: '5215587654321', tag: 'store-bot', country: 'MX', dial: 41414, mask: 'COLLOQUY' })).toStrictEqual({
      msisdns: ['5215587654321'],
      message: 'Hello',
      tag: 'store-bot',
      country: 'MX',
      dial: 41414,
      mask: 'COLLOQUY',
    });
  });

  it('wants an upper-case ISO alpha-2 country', () => {
    for (const country of ['mx', 'Mx', 'MEX', 'M', '52', '']) {
      expect(validationError(() => toSmsRequest('Hello', { to: '5215587654321', country })).issues).toEqual([{ path: ['country'], message: 'must be an ISO-3166 alpha-2 code in upper case' }]);
    }
    expect(toSmsRequest('Hello', { to: '5215587654321', country: 'US' }).country).toBe('US');
  });

  it('wants a positive whole dial and a mask of 1 to 11 characters', () => {
    expect(pathsOf(validationError(() => toSmsRequest('Hi', { to: '5215587654321', dial: 0 })).issues)).toEqual(['dial']);
    expect(pathsOf(validationError(() => toSmsRequest('Hi', { to: '5215587654321', dial: 41.5 })).issues)).toEqual(['dial']);
    expect(toSmsRequest('Hi', { to: '5215587654321', mask: chars(11, 'M') }).mask).toBe('MMMMMMMMMMM');
    expect(pathsOf(validationError(() => toSmsRequest('Hi', { to: '5215587654321', mask: chars(12, 'M') })).issues)).toEqual(['mask']);
    expect(pathsOf(validationError(() => toSmsRequest('Hi', { to: '5215587654321', mask: '' })).issues)).toEqual(['mask']);
  });

  it('refuses a recipient that is not digits only, and an empty or too long text, all at once', () => {
    const e = validationError(() => toSmsRequest('', { to: '+5215587654321', country: 'mx' }));
    expect(pathsOf(e.issues)).toEqual(['msisdns[0]', 'message', 'country']);
    expect(pathsOf(validationError(() => toSmsRequest(chars(1601), { to: '5215587654321' })).issues)).toEqual(['message']);
    expect(toSmsRequest(chars(1600), { to: '5215587654321' }).message).toHaveLength(1600);
  });

  it('the schema takes several recipients and needs at least one', () => {
    expect(issuesOf(SmsRequestSchema, { msisdns: ['5215587654321', '5215512345678'], message: 'Hi' })).toEqual([]);
    expect(issuesOf(SmsRequestSchema, { msisdns: [], message: 'Hi' })).toEqual([{ path: 'msisdns', message: 'at least one recipient is required' }]);
    expect(issuesOf(SmsRequestSchema, { msisdns: ['5215587654321'], message: 'Hi', from: '1' })).toEqual([{ path: 'from', message: 'unknown field "from"' }]);
  });
});

describe('fromSeedJson', () => {
  for (const [name, json] of Object.entries(SEED_VARIANTS)) {
    it(`reads the seed ${name} and writes it back unchanged`, () => {
      const { message, from, to } = fromSeedJson(JSON.parse(json));
      expect(from).toBe('5215512345678');
      expect(to).toBe('5215587654321');
      expect(toInteractiveRequest(message, { from: from!, to: to! })).toStrictEqual(seed(json));
    });
  }

  it('gives the message kind and body object of each variant', () => {
    const l = fromSeedJson(seed(SEED_LIST_JSON)).message;
    expect(l.kind).toBe('list');
    expect(l.kind === 'list' && l.listMessages).toStrictEqual(seed(SEED_LIST_JSON).listMessages);
    expect(variantOf(l)).toBe('list');
    expect(variantOf(fromSeedJson(seed(SEED_BUTTONS_IMAGE_JSON)).message)).toBe('buttons(image)');
    expect(variantOf(fromSeedJson(seed(SEED_BUTTONS_VIDEO_JSON)).message)).toBe('buttons(video)');
    expect(variantOf(fromSeedJson(seed(SEED_BUTTONS_DOCUMENT_JSON)).message)).toBe('buttons(document)');
    const f = fromSeedJson(seed(SEED_FLOW_JSON)).message;
    expect(f.kind).toBe('flow');
    expect(f.kind === 'flow' && f.flow.action.parameters.flow_action_payload?.data?.['product_price']).toBe(129.5);
    expect(variantOf(f)).toBe('flow');
  });

  it('reads a message without the envelope numbers', () => {
    const { type, listMessages } = seed(SEED_LIST_JSON);
    const r = fromSeedJson({ type, listMessages });
    expect(r.message.kind).toBe('list');
    expect(r).not.toHaveProperty('from');
    expect(r).not.toHaveProperty('to');
  });

  it('reports problems with seed paths', () => {
    const v = seed(SEED_LIST_JSON);
    v.listMessages.rows = [];
    v.listMessages.sections[0].messages[0].title = chars(25);
    v.type = 'interactive';
    const e = validationError(() => fromSeedJson(v));
    expect(pathsOf(e.issues)).toEqual(['listMessages.sections[0].messages[0].title', 'listMessages.rows', 'type']);
  });

  it('checks the numbers it is given', () => {
    const v = seed(SEED_FLOW_JSON);
    v.to = '+5215587654321';
    expect(pathsOf(validationError(() => fromSeedJson(v)).issues)).toEqual(['to']);
  });

  it('refuses what is not a JSON object', () => {
    for (const v of [null, 'listMessages', 42, [seed(SEED_LIST_JSON)]]) {
      const e = validationError(() => fromSeedJson(v));
      expect(e).toBeInstanceOf(MessageValidationError);
      expect(e.issues).toEqual([{ path: [], message: 'must be a JSON object with "type" and one of listMessages, replyButtons, flow' }]);
    }
    expect(pathsOf(validationError(() => fromSeedJson({})).issues)).toEqual(['type', '(root)']);
  });
});

describe('variantOf', () => {
  it('names every kind of message', () => {
    expect(variantOf(aList)).toBe('list');
    expect(variantOf(someButtons)).toBe('buttons');
    expect(variantOf(aFlow)).toBe('flow');
    expect(variantOf(text('hi'))).toBe('text');
    expect(variantOf(sms('hi'))).toBe('sms');
  });
});
