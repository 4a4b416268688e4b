import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_PATHS } from '../../src/sandbox/index.js';
import { fakeClock, postMessage, start } from './helpers.js';

const grant = { grant_type: 'client_credentials', client_id: SANDBOX_CLIENT_ID, client_secret: SANDBOX_CLIENT_SECRET };
const basic = (id: string, secret: string): string => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

describe('POST /token', () => {
  it('grants a bearer token for credentials in the body', async () => {
    const { url, sandbox } = await start();
    const res = await request(url).post(SANDBOX_PATHS.token).type('form').send(grant).expect(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 600 });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(sandbox.tokenRequests()).toBe(1);
    expect(sandbox.tokensIssued()).toBe(1);
  });

  it('grants a token for credentials in HTTP Basic auth', async () => {
    const { url } = await start();
    const res = await request(url).post(SANDBOX_PATHS.token).set('Authorization', basic(SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET)).type('form').send({ grant_type: 'client_credentials' }).expect(200);
    expect(res.body.token_type).toBe('Bearer');
  });

  it('decodes form-encoded Basic credentials (RFC 6749 §2.3.1)', async () => {
    const { url } = await start({ clientId: 'my client', clientSecret: 's:e/c+r%t' });
    await request(url).post(SANDBOX_PATHS.token).set('Authorization', basic('my client', 's:e/c+r%t')).type('form').send({ grant_type: 'client_credentials' }).expect(200);
  });

  it('issues a different opaque token each time', async () => {
    const { url } = await start();
    const a = await request(url).post(SANDBOX_PATHS.token).type('form').send(grant);
    const b = await request(url).post(SANDBOX_PATHS.token).type('form').send(grant);
    expect(a.body.access_token).not.toBe(b.body.access_token);
    expect(a.body.access_token.length).toBeGreaterThanOrEqual(32);
  });

  it('uses the configured lifetime', async () => {
    const { url } = await start({ tokenLifetimeSeconds: 120 });
    const res = await request(url).post(SANDBOX_PATHS.token).type('form').send(grant).expect(200);
    expect(res.body.expires_in).toBe(120);
  });

  it('answers 401 invalid_client for a wrong secret, in the body or in Basic', async () => {
    const { url } = await start();
    const body = await request(url)
      .post(SANDBOX_PATHS.token)
      .type('form')
      .send({ ...grant, client_secret: 'nope' })
      .expect(401);
    expect(body.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
    const viaBasic = await request(url).post(SANDBOX_PATHS.token).set('Authorization', basic(SANDBOX_CLIENT_ID, 'nope')).type('form').send({ grant_type: 'client_credentials' }).expect(401);
    expect(viaBasic.body.error).toBe('invalid_client');
    expect(viaBasic.headers['www-authenticate']).toMatch(/^Basic /);
  });

  it('answers 401 invalid_client for an unknown client or none at all', async () => {
    const { url } = await start();
    const unknown = await request(url)
      .post(SANDBOX_PATHS.token)
      .type('form')
      .send({ ...grant, client_id: 'someone' })
      .expect(401);
    expect(unknown.body.error).toBe('invalid_client');
    const none = await request(url).post(SANDBOX_PATHS.token).type('form').send({ grant_type: 'client_credentials' }).expect(401);
    expect(none.body.error).toBe('invalid_client');
  });

  it('answers 400 unsupported_grant_type for another grant', async () => {
    const { url } = await start();
    const res = await request(url)
      .post(SANDBOX_PATHS.token)
      .type('form')
      .send({ ...grant, grant_type: 'password' })
      .expect(400);
    expect(res.body.error).toBe('unsupported_grant_type');
  });

  it('answers 400 invalid_request for a missing grant, a repeated parameter, two auth methods or a JSON body', async () => {
    const { url } = await start();
    const missing = await request(url).post(SANDBOX_PATHS.token).type('form').send({ client_id: SANDBOX_CLIENT_ID, client_secret: SANDBOX_CLIENT_SECRET }).expect(400);
    expect(missing.body.error).toBe('invalid_request');
    const repeated = await request(url).post(SANDBOX_PATHS.token).type('form').send('grant_type=client_credentials&grant_type=client_credentials&client_id=a&client_secret=b').expect(400);
    expect(repeated.body.error).toBe('invalid_request');
    const both = await request(url).post(SANDBOX_PATHS.token).set('Authorization', basic(SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET)).type('form').send(grant).expect(400);
    expect(both.body.error).toBe('invalid_request');
    const json = await request(url).post(SANDBOX_PATHS.token).send(grant).expect(400);
    expect(json.body.error).toBe('invalid_request');
  });

  it('answers 405 to other methods', async () => {
    const { url } = await start();
    const res = await request(url).get(SANDBOX_PATHS.token).expect(405);
    expect(res.headers['allow']).toBe('POST');
  });
});

describe('bearer tokens on the messaging endpoint', () => {
  it('refuses a missing, unknown or malformed token with 401 and WWW-Authenticate', async () => {
    const { url } = await start();
    for (const auth of [undefined, 'Bearer not-a-token', 'Basic abc', 'Bearer']) {
      const req = request(url).post(SANDBOX_PATHS.messaging);
      if (auth !== undefined) req.set('Authorization', auth);
      const res = await req.send({}).expect(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer .*error="invalid_token"/);
      expect(res.body.error.code).toBe(190);
    }
  });

  it('refuses a token once it expires by the clock', async () => {
    const clock = fakeClock();
    const { url, sandbox } = await start({ clock, tokenLifetimeSeconds: 60 });
    const token = sandbox.issueToken();
    clock.advance(59_999);
    const live = await postMessage(url, token, {}).expect(400);
    expect(live.body.error.code).toBe(100);
    clock.advance(1);
    const expired = await postMessage(url, token, {}).expect(401);
    expect(expired.headers['www-authenticate']).toContain('error="invalid_token"');
    expect(expired.headers['www-authenticate']).toContain('expired');
  });

  it('refuses tokens expired early with expireTokens(), and accepts new ones', async () => {
    const { url, sandbox } = await start();
    const old = sandbox.issueToken();
    sandbox.expireTokens();
    await postMessage(url, old, {}).expect(401);
    await postMessage(url, sandbox.issueToken(), {}).expect(400);
  });

  it('applies a new lifetime to tokens issued afterwards', async () => {
    const clock = fakeClock();
    const { url, sandbox } = await start({ clock });
    sandbox.setTokenLifetime(5);
    const res = await request(url).post(SANDBOX_PATHS.token).type('form').send(grant).expect(200);
    expect(res.body.expires_in).toBe(5);
    clock.advance(5_000);
    await postMessage(url, res.body.access_token, {}).expect(401);
  });
});
