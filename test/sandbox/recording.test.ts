import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_PATHS, createSandbox, type SandboxMessage } from '../../src/sandbox/index.js';
import { TO, fakeClock, listRequest, postMessage, postSms, smsRequest, start } from './helpers.js';

describe('recording', () => {
  it('records every request with redacted credentials, its parsed body, status and time', async () => {
    const clock = fakeClock();
    const { url, sandbox } = await start({ clock });
    const granted = await request(url).post(SANDBOX_PATHS.token).type('form').send({ grant_type: 'client_credentials', client_id: SANDBOX_CLIENT_ID, client_secret: SANDBOX_CLIENT_SECRET });
    const token = granted.body.access_token as string;
    await postMessage(url, token, listRequest);
    const [tok, msg] = sandbox.requests;
    expect(tok).toMatchObject({ seq: 1, endpoint: 'token', method: 'POST', path: '/token', status: 200, at: clock.now() });
    expect(tok?.body).toEqual({ grant_type: 'client_credentials', client_id: SANDBOX_CLIENT_ID, client_secret: '<redacted>' });
    expect(tok?.response).toEqual({ access_token: '<redacted>', token_type: 'Bearer', expires_in: 600 });
    expect(msg).toMatchObject({ seq: 2, endpoint: 'messaging', path: SANDBOX_PATHS.messaging, body: listRequest, status: 200 });
    expect(msg?.headers['authorization']).toBe('Bearer <redacted>');
    expect(msg?.headers['content-type']).toContain('application/json');
    expect(JSON.stringify(sandbox.requests)).not.toContain(token);
    expect(JSON.stringify(sandbox.requests)).not.toContain(SANDBOX_CLIENT_SECRET);
    expect(sandbox.requestsTo('messaging')).toHaveLength(1);
  });

  it('records refused requests too, with what was answered', async () => {
    const { url, sandbox } = await start();
    await request(url).post(SANDBOX_PATHS.sms).send(smsRequest);
    expect(sandbox.requests[0]).toMatchObject({ endpoint: 'sms', status: 401, response: { code: 1 } });
  });

  it('works mounted under a prefix, recording the relative path and the full url', async () => {
    const sandbox = createSandbox();
    const app = express();
    app.use('/sandbox', sandbox.router);
    app.get('/other', (_req, res) => void res.send('mine'));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await postMessage(`${base}/sandbox`, sandbox.issueToken(), listRequest).expect(200);
      expect(sandbox.requests[0]).toMatchObject({ path: SANDBOX_PATHS.messaging, url: `/sandbox${SANDBOX_PATHS.messaging}` });
      await request(base).get('/other').expect(200, 'mine');
      await request(base).get('/sandbox/_sandbox/stats').expect(200);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('streams accepted messages to listeners until they unsubscribe', async () => {
    const { url, sandbox } = await start();
    const seen: SandboxMessage[] = [];
    const stop = sandbox.onMessage((m) => seen.push(m));
    const requests: number[] = [];
    sandbox.onRequest((r) => requests.push(r.status));
    const token = sandbox.issueToken();
    await postMessage(url, token, listRequest).expect(200);
    await postSms(url, token, smsRequest).expect(200);
    stop();
    await postSms(url, token, smsRequest).expect(200);
    expect(seen.map((m) => m.channel)).toEqual(['interactive', 'sms']);
    expect(requests).toEqual([200, 200, 200]);
  });

  it('keeps answering when a listener throws', async () => {
    const { url, sandbox } = await start();
    sandbox.onMessage(() => {
      throw new Error('listener bug');
    });
    const warned = once(process, 'warning');
    await postMessage(url, sandbox.issueToken(), listRequest).expect(200);
    const [warning] = (await warned) as [Error];
    expect(warning.message).toContain('listener bug');
  });

  it('resets records and faults but keeps tokens valid', async () => {
    const { url, sandbox } = await start();
    const token = sandbox.issueToken();
    await postMessage(url, token, listRequest).expect(200);
    sandbox.faults.smsError(15);
    sandbox.reset();
    expect(sandbox.requests).toHaveLength(0);
    expect(sandbox.messages).toHaveLength(0);
    expect(sandbox.messagesTo(TO)).toEqual([]);
    expect((await postSms(url, token, smsRequest).expect(200)).body.code).toBe(0);
    expect(sandbox.tokenRequests()).toBe(0);
  });

  it('keeps at most maxRecords of each, but counts every token request', async () => {
    const { url, sandbox } = await start({ maxRecords: 2 });
    const token = sandbox.issueToken();
    for (let i = 0; i < 3; i++) await request(url).post(SANDBOX_PATHS.token).type('form').send({});
    expect(sandbox.tokenRequests()).toBe(3);
    sandbox.reset();
    for (let i = 0; i < 3; i++) await postSms(url, token, smsRequest).expect(200);
    expect(sandbox.requests.map((r) => r.seq)).toEqual([5, 6]);
    expect(sandbox.messages.map((m) => m.seq)).toEqual([2, 3]);
  });
});
