import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthError, TransportError } from '../../src/errors.js';
import { HttpClient, OAuthTokenProvider, staticToken, type TransportEvent } from '../../src/transport/index.js';
import { FakeClock, TOKEN, startProvider, type FakeProvider } from './helpers.js';

let provider: FakeProvider;
let http: HttpClient;
let clock: FakeClock;
beforeEach(async () => {
  provider = await startProvider();
  http = new HttpClient();
  clock = new FakeClock();
});
afterEach(async () => {
  await http.close();
  await provider.close();
});

function tokens(extra: Partial<ConstructorParameters<typeof OAuthTokenProvider>[0]> = {}) {
  return new OAuthTokenProvider({ authUrl: provider.authUrl, clientId: 'client-1', clientSecret: 's3cr3t-value', http, clock, ...extra });
}

describe('OAuthTokenProvider', () => {
  it('sends the client-credentials grant as a form, credentials in the body by default', async () => {
    const token = await tokens().getToken();
    expect(token).toMatch(/^tok-/);
    const req = provider.seen[0]!;
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(req.headers['authorization']).toBeUndefined();
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({ grant_type: 'client_credentials', client_id: 'client-1', client_secret: 's3cr3t-value' });
  });

  it('with authMethod basic sends the Basic header and no body credentials', async () => {
    await tokens({ authMethod: 'basic', clientSecret: 'a b:c' }).getToken();
    const req = provider.seen[0]!;
    expect(req.headers['authorization']).toBe(`Basic ${Buffer.from('client-1:a+b%3Ac').toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(req.body))).toEqual({ grant_type: 'client_credentials' });
  });

  it('1,000 concurrent callers cause exactly one token request', async () => {
    const t = tokens();
    const all = await Promise.all(Array.from({ length: 1000 }, () => t.getToken()));
    expect(new Set(all).size).toBe(1);
    expect(provider.count(TOKEN)).toBe(1);
  });

  it('refreshes once at expiresAt − min(60 s, lifetime/2), single flight', async () => {
    const t = tokens();
    const first = await t.getToken();
    clock.advance(539_999);
    expect(await t.getToken()).toBe(first);
    expect(provider.count(TOKEN)).toBe(1);
    clock.advance(1);
    const again = await Promise.all(Array.from({ length: 100 }, () => t.getToken()));
    expect(new Set(again).size).toBe(1);
    expect(again[0]).not.toBe(first);
    expect(provider.count(TOKEN)).toBe(2);
  });

  it('uses half the lifetime for short tokens and 600 s when expires_in is absent', async () => {
    provider.handlers[TOKEN] = (_r, n) => ({ body: n === 1 ? { access_token: 'short', expires_in: 60 } : { access_token: `t${n}` } });
    const t = tokens();
    await t.getToken();
    clock.advance(29_999);
    expect(await t.getToken()).toBe('short');
    clock.advance(1);
    expect(await t.getToken()).toBe('t2');
    clock.advance(539_999);
    expect(await t.getToken()).toBe('t2');
    clock.advance(1);
    expect(await t.getToken()).toBe('t3');
  });

  it('invalidate drops the cached token only if it is that one', async () => {
    const t = tokens();
    const first = await t.getToken();
    t.invalidate('something-else');
    expect(await t.getToken()).toBe(first);
    t.invalidate(first);
    expect(await t.getToken()).not.toBe(first);
    expect(provider.count(TOKEN)).toBe(2);
  });

  it('invalid_client fails fast with an AuthError and no retry', async () => {
    provider.handlers[TOKEN] = () => ({ status: 401, body: { error: 'invalid_client', error_description: 'bad secret s3cr3t-value' } });
    const err = await tokens()
      .getToken()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AuthError);
    expect((err as AuthError).providerCode).toBe('invalid_client');
    expect((err as AuthError).message).not.toContain('s3cr3t-value');
    expect(provider.count(TOKEN)).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('a secret echoed in the form body, URL-encoded or form-encoded, never reaches the error', async () => {
    const secret = 'p+ss/w=rd with space';
    const forms = [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)];
    expect(new Set(forms).size).toBe(3); // the three differ: + / = escaped, and a space as %20 or +
    provider.handlers[TOKEN] = (req) => ({ status: 401, body: { error: 'invalid_client', error_description: `bad request: ${req.body}` } });
    const auth = await tokens({ clientSecret: secret })
      .getToken()
      .catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(AuthError);
    expect((auth as AuthError).message).toContain('client_secret=[redacted]');
    provider.handlers[TOKEN] = (req) => ({ status: 400, body: { error: 'invalid_request', error_description: `${encodeURIComponent(secret)} ${req.body}` } });
    const other = await tokens({ clientSecret: secret })
      .getToken()
      .catch((e: unknown) => e);
    expect(other).toBeInstanceOf(TransportError);
    for (const err of [auth, other]) for (const form of forms) expect((err as Error).message).not.toContain(form);
  });

  it('unauthorized_client with 400 is an AuthError too', async () => {
    provider.handlers[TOKEN] = () => ({ status: 400, body: { error: 'unauthorized_client' } });
    await expect(tokens().getToken()).rejects.toBeInstanceOf(AuthError);
    expect(provider.count(TOKEN)).toBe(1);
  });

  it('retries 5xx with backoff, then succeeds', async () => {
    provider.handlers[TOKEN] = (_r, n) => (n < 3 ? { status: 503 } : { body: { access_token: 'ok-token' } });
    const events: TransportEvent[] = [];
    expect(await tokens({ onEvent: (e) => events.push(e) }).getToken()).toBe('ok-token');
    expect(provider.count(TOKEN)).toBe(3);
    expect(clock.sleeps).toHaveLength(2);
    expect(events.filter((e) => e.type === 'token.request').map((e) => e.ok)).toEqual([false, false, true]);
  });

  it('gives up after maxAttempts and does not cache the failure', async () => {
    provider.handlers[TOKEN] = () => ({ status: 500 });
    const t = tokens({ retry: { maxAttempts: 2 } });
    const err = await t.getToken().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).retryable).toBe(true);
    expect(provider.count(TOKEN)).toBe(2);
    provider.handlers[TOKEN] = () => ({ body: { access_token: 'later' } });
    expect(await t.getToken()).toBe('later');
  });

  it('keeps serving a still-valid token when a refresh fails', async () => {
    const t = tokens({ retry: { maxAttempts: 1 } });
    const first = await t.getToken();
    clock.advance(550_000);
    provider.handlers[TOKEN] = () => ({ status: 502 });
    expect(await t.getToken()).toBe(first);
    clock.advance(50_000);
    await expect(t.getToken()).rejects.toBeInstanceOf(TransportError);
  });

  it('retries network errors', async () => {
    provider.handlers[TOKEN] = (_r, n) => (n === 1 ? { destroy: true } : { body: { access_token: 'after-reset' } });
    expect(await tokens().getToken()).toBe('after-reset');
    expect(provider.count(TOKEN)).toBe(2);
  });

  it('rejects an answer without access_token, without retrying', async () => {
    provider.handlers[TOKEN] = () => ({ body: { token_type: 'Bearer' } });
    await expect(tokens().getToken()).rejects.toThrow(/no access_token/);
    expect(provider.count(TOKEN)).toBe(1);
  });
});

describe('staticToken', () => {
  it('always gives the same token and ignores invalidate', async () => {
    const t = staticToken('fixed');
    t.invalidate('fixed');
    expect(await t.getToken()).toBe('fixed');
  });
});
