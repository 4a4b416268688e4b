import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { REENGAGEMENT_DETAILS, SANDBOX_PATHS } from '../../src/sandbox/index.js';
import { TO, getToken, listRequest, postMessage, postSms, smsRequest, start } from './helpers.js';

describe('fault injection', () => {
  it('answers a given status for the next N calls of an endpoint, in its own error shape', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    sandbox.faults.fail('messaging', { status: 503, times: 2 });
    const first = await postMessage(url, token, listRequest).expect(503);
    expect(first.body).toEqual({ error: { code: 131000, message: expect.any(String) } });
    await postMessage(url, token, listRequest).expect(503);
    await postMessage(url, token, listRequest).expect(200);
    expect(sandbox.requests.map((r) => [r.status, r.fault])).toEqual([
      [503, 'status'],
      [503, 'status'],
      [200, undefined],
    ]);
  });

  it('answers a given body and headers', async () => {
    const { url, sandbox } = await start();
    sandbox.faults.fail('sms', { status: 500, body: { code: -19, hint: 'down', message: 'Server error' }, headers: { 'x-fault': 'yes' } });
    const res = await postSms(url, sandbox.issueToken(), smsRequest).expect(500);
    expect(res.body).toEqual({ code: -19, hint: 'down', message: 'Server error' });
    expect(res.headers['x-fault']).toBe('yes');
  });

  it('applies an "any" fault to whichever endpoint is called next, token included', async () => {
    const { url, sandbox } = await start();
    sandbox.faults.fail('any', { status: 502 });
    const res = await request(url).post(SANDBOX_PATHS.token).type('form').send({ grant_type: 'client_credentials' }).expect(502);
    expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    await getToken(url);
  });

  it('queues faults in order and leaves other endpoints alone', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    sandbox.faults.fail('sms', { status: 500 });
    sandbox.faults.fail('sms', { status: 503 });
    await postMessage(url, token, listRequest).expect(200);
    await postSms(url, token, smsRequest).expect(500);
    await postSms(url, token, smsRequest).expect(503);
    await postSms(url, token, smsRequest).expect(200);
  });

  it('answers 429 with Retry-After', async () => {
    const { url, sandbox } = await start();
    sandbox.faults.rateLimit('messaging', { retryAfter: 7 });
    const res = await postMessage(url, sandbox.issueToken(), listRequest).expect(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.body.error.code).toBe(130429);
    expect(sandbox.requests[0]?.fault).toBe('rate-limit');
  });

  it('adds latency, for N calls or until cleared', async () => {
    const waits: number[] = [];
    const { url, sandbox } = await start({ sleep: async (ms) => void waits.push(ms) });
    const token = sandbox.issueToken();
    sandbox.faults.latency(250, { endpoint: 'messaging', times: 1 });
    sandbox.faults.latency(40);
    await postMessage(url, token, listRequest).expect(200);
    await postMessage(url, token, listRequest).expect(200);
    await postSms(url, token, smsRequest).expect(200);
    expect(waits).toEqual([250, 40, 40]);
    sandbox.clearFaults();
    await postSms(url, token, smsRequest).expect(200);
    expect(waits).toHaveLength(3);
  });

  it('really waits with the default sleep', async () => {
    const { url, sandbox } = await start();
    sandbox.faults.latency(120, { endpoint: 'token' });
    const t0 = performance.now();
    await getToken(url);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(110);
  });

  it('answers an SMS business code with HTTP 200 for the next N valid SMS', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    sandbox.faults.smsError(15, { times: 2 });
    sandbox.faults.smsError(19, { hint: 'try later' });
    for (let i = 0; i < 2; i++) {
      const res = await postSms(url, token, smsRequest).expect(200);
      expect(res.body).toEqual({ code: 15, hint: expect.any(String), message: 'Insufficient credit' });
    }
    expect((await postSms(url, token, smsRequest).expect(200)).body).toEqual({ code: 19, hint: 'try later', message: 'Server error' });
    expect((await postSms(url, token, smsRequest).expect(200)).body.code).toBe(0);
    expect(sandbox.messages).toHaveLength(1);
  });

  it('does not spend an SMS code on a request that fails validation', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    sandbox.faults.smsError(15);
    expect((await postSms(url, token, { message: 'x' }).expect(200)).body.code).toBe(13);
    expect((await postSms(url, token, smsRequest).expect(200)).body.code).toBe(15);
  });

  it('refuses the interactive channel for chosen recipients with a Meta-style 131047', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    sandbox.faults.refuseInteractive(TO);
    const res = await postMessage(url, token, listRequest).expect(400);
    expect(res.body).toEqual({ error: { code: 131047, message: 'Re-engagement message', error_data: { details: REENGAGEMENT_DETAILS } } });
    await postMessage(url, token, { ...listRequest, to: '5215500000000' }).expect(200);
    await postSms(url, token, smsRequest).expect(200);
    expect(sandbox.messagesTo(TO).map((m) => m.channel)).toEqual(['sms']);
    sandbox.faults.allowInteractive(TO);
    await postMessage(url, token, listRequest).expect(200);
  });

  it('refuses with another code and status when told', async () => {
    const { url, sandbox } = await start();
    sandbox.faults.refuseInteractive([TO], { code: 131026, message: 'Message undeliverable', status: 400, details: 'not on WhatsApp' });
    const res = await postMessage(url, sandbox.issueToken(), listRequest).expect(400);
    expect(res.body.error).toEqual({ code: 131026, message: 'Message undeliverable', error_data: { details: 'not on WhatsApp' } });
  });

  it('clears every fault', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    sandbox.faults.fail('any', { status: 500, times: 5 });
    sandbox.faults.smsError(15);
    sandbox.faults.refuseInteractive(TO);
    sandbox.clearFaults();
    expect(sandbox.faults.snapshot()).toEqual({ statuses: [], latencies: [], smsErrors: [], refused: [], cloudErrors: [] });
    await postMessage(url, token, listRequest).expect(200);
    expect((await postSms(url, token, smsRequest).expect(200)).body.code).toBe(0);
  });

  it('rejects nonsense with a ConfigError', async () => {
    const { sandbox } = await start();
    expect(() => sandbox.faults.fail('sms', { status: 42 })).toThrow(ConfigError);
    expect(() => sandbox.faults.fail('sms', { status: 500, times: 0 })).toThrow(ConfigError);
    expect(() => sandbox.faults.smsError(0)).toThrow(ConfigError);
    expect(() => sandbox.faults.latency(-1)).toThrow(ConfigError);
    expect(() => sandbox.setTokenLifetime(0)).toThrow(ConfigError);
  });
});
