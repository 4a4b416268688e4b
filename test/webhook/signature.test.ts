/** X-Hub-Signature-256 over the raw bytes, on both POST routes. */
import { describe, expect, it } from 'vitest';
import { inboundSms, signBody, textMessage, webhookPayload } from '../../src/sandbox/index.js';
import orderBot from '../fixtures/order-bot.js';
import { SECRET, USER, codeOf, stack } from './helpers.js';

const payload = () => webhookPayload({ messages: [textMessage({ from: USER, text: 'hi' })] });

describe('signature', () => {
  it('accepts a body signed over its raw bytes, whatever its spacing', async () => {
    const s = await stack({ bots: [orderBot] });
    const raw = JSON.stringify(payload(), null, 3);
    const r = await s.post('/webhook', raw, { signature: signBody(SECRET, raw) });
    expect(r.status).toBe(200);
    expect(s.count('inbox')).toBe(1);
    await s.runtime.idle();
  });

  it('refuses a missing signature with 401 and stores nothing', async () => {
    const s = await stack({ bots: [orderBot] });
    const r = await s.post('/webhook', payload(), { sign: false });
    expect(r.status).toBe(401);
    expect(codeOf(r)).toBe('signature_missing');
    expect(s.count('inbox')).toBe(0);
  });

  it('refuses a wrong signature (other secret, garbage, empty) with 401', async () => {
    const s = await stack({ bots: [orderBot] });
    const raw = JSON.stringify(payload());
    for (const signature of [signBody('other-secret', raw), 'sha256=abc', 'garbage', `sha1=${'0'.repeat(64)}`]) {
      const r = await s.post('/webhook', raw, { signature });
      expect(r.status, signature).toBe(401);
      expect(codeOf(r)).toBe('signature_invalid');
      expect((r.json as { error: { message: string } }).error.message).not.toContain(SECRET);
    }
    expect(s.count('inbox')).toBe(0);
  });

  it('refuses a signature computed over a re-serialized body', async () => {
    const s = await stack({ bots: [orderBot] });
    const raw = JSON.stringify(payload(), null, 2);
    const reserialized = JSON.stringify(JSON.parse(raw) as unknown);
    expect(reserialized).not.toBe(raw);
    const r = await s.post('/webhook', raw, { signature: signBody(SECRET, reserialized) });
    expect(r.status).toBe(401);
    expect(s.count('inbox')).toBe(0);
  });

  it('checks the signature on POST /webhook/sms too', async () => {
    const s = await stack({ bots: [orderBot] });
    const sms = inboundSms({ from: USER, text: 'hola' });
    expect((await s.post('/webhook/sms', sms, { sign: false })).status).toBe(401);
    expect((await s.post('/webhook/sms', sms, { signature: signBody('nope', JSON.stringify(sms)) })).status).toBe(401);
    expect(s.count('inbox')).toBe(0);
    expect((await s.post('/webhook/sms', sms)).status).toBe(200);
    expect(s.count('inbox')).toBe(1);
    await s.runtime.idle();
  });

  it('does not check signatures when no secret is configured', async () => {
    const s = await stack({ bots: [orderBot], secret: null });
    const r = await s.post('/webhook', payload());
    expect(r.status).toBe(200);
    await s.runtime.idle();
  });

  it('counts refusals in the metrics', async () => {
    const s = await stack({ bots: [orderBot] });
    await s.post('/webhook', payload(), { sign: false });
    await s.post('/webhook', payload());
    await s.runtime.idle();
    const m = s.runtime.metrics;
    expect(m.value('colloquy_webhook_requests_total', { route: 'webhook', outcome: 'signature_missing' })).toBe(1);
    expect(m.value('colloquy_webhook_requests_total', { route: 'webhook', outcome: 'ok' })).toBe(1);
    expect(await m.render()).toContain('colloquy_webhook_seconds_count{route="webhook"} 2');
  });
});
