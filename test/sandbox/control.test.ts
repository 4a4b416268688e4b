import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SANDBOX_PATHS } from '../../src/sandbox/index.js';
import { TO, getToken, listRequest, postMessage, postSms, smsRequest, start } from './helpers.js';

const C = SANDBOX_PATHS.control;

describe('control routes /_sandbox/*', () => {
  it('injects a status fault for N calls', async () => {
    const { url, sandbox } = await start();
    await request(url).post(`${C}/faults/fail`).send({ endpoint: 'messaging', status: 500, times: 2 }).expect(200, { ok: true });
    const token = sandbox.issueToken();
    await postMessage(url, token, listRequest).expect(500);
    await postMessage(url, token, listRequest).expect(500);
    await postMessage(url, token, listRequest).expect(200);
  });

  it('injects a 429 with Retry-After', async () => {
    const { url } = await start();
    await request(url).post(`${C}/faults/rate-limit`).send({ endpoint: 'token', retryAfter: 3 }).expect(200);
    const res = await request(url).post(SANDBOX_PATHS.token).type('form').send({}).expect(429);
    expect(res.headers['retry-after']).toBe('3');
    await getToken(url);
  });

  it('adds latency', async () => {
    const waits: number[] = [];
    const { url, sandbox } = await start({ sleep: async (ms) => void waits.push(ms) });
    await request(url).post(`${C}/faults/latency`).send({ ms: 300, endpoint: 'sms', times: 1 }).expect(200);
    await postSms(url, sandbox.issueToken(), smsRequest).expect(200);
    expect(waits).toEqual([300]);
  });

  it('injects an SMS error code', async () => {
    const { url, sandbox } = await start();
    await request(url).post(`${C}/faults/sms-error`).send({ code: 19, times: 1 }).expect(200);
    expect((await postSms(url, sandbox.issueToken(), smsRequest).expect(200)).body).toMatchObject({ code: 19, message: 'Server error' });
  });

  it('refuses and re-allows the interactive channel for recipients', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    await request(url)
      .post(`${C}/faults/refuse-interactive`)
      .send({ to: [TO] })
      .expect(200);
    expect((await postMessage(url, token, listRequest).expect(400)).body.error.code).toBe(131047);
    await request(url).post(`${C}/faults/allow-interactive`).send({ to: TO }).expect(200);
    await postMessage(url, token, listRequest).expect(200);
  });

  it('lists and clears faults', async () => {
    const { url } = await start();
    await request(url).post(`${C}/faults/fail`).send({ endpoint: 'any', status: 503 }).expect(200);
    await request(url).post(`${C}/faults/latency`).send({ ms: 10 }).expect(200);
    const listed = await request(url).get(`${C}/faults`).expect(200);
    expect(listed.body).toEqual({
      statuses: [{ target: 'any', kind: 'status', status: 503, remaining: 1 }],
      latencies: [{ target: 'any', ms: 10, remaining: null }],
      smsErrors: [],
      refused: [],
      cloudErrors: [],
    });
    await request(url).delete(`${C}/faults`).expect(200);
    expect((await request(url).get(`${C}/faults`)).body.statuses).toEqual([]);
  });

  it('expires tokens early and sets the lifetime', async () => {
    const { url } = await start();
    const token = await getToken(url);
    await request(url).post(`${C}/tokens/expire`).expect(200);
    await postMessage(url, token, listRequest).expect(401);
    await request(url).post(`${C}/tokens/lifetime`).send({ seconds: 30 }).expect(200);
    const res = await request(url).post(SANDBOX_PATHS.token).type('form').send({ grant_type: 'client_credentials', client_id: 'sandbox-client', client_secret: 'sandbox-secret' });
    expect(res.body.expires_in).toBe(30);
  });

  it('shows requests, messages and stats, and resets', async () => {
    const { url } = await start();
    const token = await getToken(url);
    await postMessage(url, token, listRequest).expect(200);
    await postSms(url, token, { ...smsRequest, msisdns: ['5215500000001'] }).expect(200);
    expect((await request(url).get(`${C}/requests`)).body).toHaveLength(3);
    expect((await request(url).get(`${C}/requests?endpoint=token`)).body).toHaveLength(1);
    expect((await request(url).get(`${C}/messages?to=${TO}`)).body).toEqual([expect.objectContaining({ channel: 'interactive', to: TO })]);
    expect((await request(url).get(`${C}/stats`)).body).toEqual({ requests: 3, messages: 2, tokenRequests: 1, tokensIssued: 1 });
    await request(url).post(`${C}/reset`).expect(200);
    expect((await request(url).get(`${C}/messages`)).body).toEqual([]);
  });

  it('answers 400 with every issue for a bad control body', async () => {
    const { url } = await start();
    const res = await request(url).post(`${C}/faults/fail`).send({ endpoint: 'fax', status: 42, extra: 1 }).expect(400);
    const paths = (res.body.error.issues as { path: string[] }[]).map((i) => i.path.join('.'));
    expect(paths.sort()).toEqual(['endpoint', 'extra', 'status']);
    await request(url).get(`${C}/requests?endpoint=fax`).expect(400);
    await request(url).post(`${C}/faults/latency`).type('json').send('{"ms":').expect(400);
  });
});
