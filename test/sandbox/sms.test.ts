import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SANDBOX_PATHS } from '../../src/sandbox/index.js';
import { TO, fakeClock, postSms, smsRequest, start } from './helpers.js';

describe('POST /services/messaging (SMS)', () => {
  it('accepts an SMS: 200 {code: 0, mailingId, result: "Applied"}', async () => {
    const { url, sandbox } = await start();
    const res = await postSms(url, sandbox.issueToken(), smsRequest).expect(200);
    expect(res.body).toEqual({ code: 0, mailingId: expect.any(Number), result: 'Applied' });
    expect(sandbox.messagesTo(TO)).toEqual([
      expect.objectContaining({ channel: 'sms', to: TO, text: smsRequest.message, request: smsRequest, providerId: String(res.body.mailingId), mailingId: res.body.mailingId }),
    ]);
  });

  it('records one message per recipient under one mailing id', async () => {
    const { url, sandbox } = await start();
    const res = await postSms(url, sandbox.issueToken(), { ...smsRequest, msisdns: [TO, '5215599999999'] }).expect(200);
    expect(sandbox.messages.map((m) => [m.to, m.providerId])).toEqual([
      [TO, String(res.body.mailingId)],
      ['5215599999999', String(res.body.mailingId)],
    ]);
  });

  it('answers a schema failure with HTTP 200, code 13 and every issue in the hint', async () => {
    const { url, sandbox } = await start();
    const res = await postSms(url, sandbox.issueToken(), { msisdns: ['+52 55'], message: '', country: 'mx' }).expect(200);
    expect(res.body).toEqual({ code: 13, hint: expect.any(String), message: expect.stringContaining('Bad request format') });
    expect(res.body.hint).toContain('msisdns[0]');
    expect(res.body.hint).toContain('message');
    expect(res.body.hint).toContain('country');
    expect(sandbox.messages).toHaveLength(0);
  });

  it('answers code 13 to a body that is not JSON', async () => {
    const { url, sandbox } = await start();
    const res = await request(url).post(SANDBOX_PATHS.sms).set('Authorization', `Bearer ${sandbox.issueToken()}`).type('form').send('a=b').expect(200);
    expect(res.body.code).toBe(13);
  });

  it('refuses a missing token (code 1) and an expired one (code 3) with 401', async () => {
    const clock = fakeClock();
    const { url, sandbox } = await start({ clock });
    const missing = await request(url).post(SANDBOX_PATHS.sms).send(smsRequest).expect(401);
    expect(missing.body).toEqual({ code: 1, hint: expect.any(String), message: 'Unauthorized' });
    expect(missing.headers['www-authenticate']).toContain('error="invalid_token"');
    const token = sandbox.issueToken();
    clock.advance(600_000);
    const expired = await postSms(url, token, smsRequest).expect(401);
    expect(expired.body.code).toBe(3);
    expect(expired.headers['www-authenticate']).toContain('error="invalid_token"');
  });
});
