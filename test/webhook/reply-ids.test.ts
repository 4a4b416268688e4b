/**
 * Every id a bot may send comes back through the webhook: a tap on a button whose id is as long as
 * the provider allows (counted in code points), and a completed flow whose token is longer than a
 * message id may be, are accepted and stored, never refused.
 */
import { describe, expect, it } from 'vitest';
import { buttonReplyMessage, flowReplyMessage, webhookPayload } from '../../src/sandbox/index.js';
import { LIMITS } from '../../src/messages/limits.js';
import { MAX_ID_LENGTH } from '../../src/storable.js';
import orderBot from '../fixtures/order-bot.js';
import { USER, stack } from './helpers.js';

describe('ids a bot may send, coming back', () => {
  it('accepts a tap on a button id of the longest length the provider allows, in astral characters', async () => {
    const s = await stack({ bots: [orderBot] });
    const id = '\u{1F355}'.repeat(LIMITS.buttons.id); // 256 code points, 512 UTF-16 units
    const r = await s.post('/webhook', webhookPayload({ messages: [buttonReplyMessage({ from: USER, buttonId: id, title: 'Pizza' })] }));
    expect(r.status, r.text).toBe(200);
    expect(s.count('inbox')).toBe(1);
  });

  it('accepts a flow token longer than an id may be, and still refuses one with a control character', async () => {
    const s = await stack({ bots: [orderBot] });
    const long = flowReplyMessage({ from: USER, flowToken: 't'.repeat(MAX_ID_LENGTH + 200), data: { size: 'small' } });
    const r = await s.post('/webhook', webhookPayload({ messages: [long] }));
    expect(r.status, r.text).toBe(200);
    const bad = flowReplyMessage({ from: USER, flowToken: 'tok\u0000en', data: {} });
    const refused = await s.post('/webhook', webhookPayload({ messages: [bad] }));
    expect(refused.status, refused.text).toBe(400);
    expect(refused.text).toContain('flow_token');
    expect(s.count('inbox')).toBe(1);
  });
});
