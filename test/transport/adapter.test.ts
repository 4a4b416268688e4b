import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { createHttpAdapter, type HttpAdapterOptions, type SendAdapter, type SendFailed, type SendResult, type TransportEvent } from '../../src/transport/index.js';
import { FakeClock, MESSAGING, SMS, TOKEN, interactive, sms, startProvider, type FakeProvider } from './helpers.js';

let provider: FakeProvider;
let clock: FakeClock;
let adapter: SendAdapter | undefined;
let events: TransportEvent[];
beforeEach(async () => {
  provider = await startProvider();
  clock = new FakeClock();
  events = [];
});
afterEach(async () => {
  await adapter?.close();
  adapter = undefined;
  await provider.close();
});

function make(extra: Partial<HttpAdapterOptions> = {}): SendAdapter {
  adapter = createHttpAdapter({
    baseUrl: provider.baseUrl,
    authUrl: provider.authUrl,
    clientId: 'client-1',
    clientSecret: 's3cr3t-value',
    clock,
    onEvent: (e) => events.push(e),
    ...extra,
  });
  return adapter;
}

function failed(r: SendResult): SendFailed {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r)}`);
  return r;
}

const bearerOf = (path: string) => provider.seen.filter((s) => s.path === path).map((s) => s.headers['authorization']);

describe('createHttpAdapter: interactive', () => {
  it('posts the envelope with bearer token and JSON content type, and records the provider id', async () => {
    const r = await make().send(interactive);
    expect(r).toMatchObject({ ok: true, channel: 'interactive', status: 200, providerId: 'wamid.1', attempts: 1 });
    const req = provider.seen.find((s) => s.path === MESSAGING)!;
    expect(req.headers['authorization']).toMatch(/^Bearer tok-/);
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual(interactive.request);
    expect(events.map((e) => e.type)).toEqual(['token.request', 'send']);
  });

  it.each([
    [{ messageId: 'm-1' }, 'm-1'],
    [{ mailingId: 77 }, '77'],
    [{ messages: [{ id: 'wamid.X' }] }, 'wamid.X'],
    [{}, undefined],
    ['accepted', undefined],
  ])('any 2xx is accepted; provider id from %j', async (body, id) => {
    provider.handlers[MESSAGING] = () => ({ status: 202, body });
    expect(await make().send(interactive)).toMatchObject({ ok: true, status: 202, providerId: id, raw: body });
  });

  it('1,000 concurrent sends cause exactly one token request', async () => {
    const a = make();
    const results = await Promise.all(Array.from({ length: 1000 }, () => a.send(interactive)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(provider.count(TOKEN)).toBe(1);
    expect(provider.count(MESSAGING)).toBe(1000);
  });

  it('a send after the refresh point causes exactly one more token request', async () => {
    const a = make();
    await Promise.all(Array.from({ length: 50 }, () => a.send(interactive)));
    clock.advance(540_000);
    await Promise.all(Array.from({ length: 50 }, () => a.send(sms)));
    expect(provider.count(TOKEN)).toBe(2);
    const bearers = new Set(bearerOf(SMS));
    expect(bearers.size).toBe(1);
    expect(bearers.has(bearerOf(MESSAGING)[0])).toBe(false);
  });

  it('a 401 causes one token refresh and one retry', async () => {
    provider.handlers[MESSAGING] = (_r, n) => (n === 1 ? { status: 401, body: { error: { code: 190, message: 'expired' } } } : { body: { id: 'ok' } });
    const r = await make().send(interactive);
    expect(r).toMatchObject({ ok: true, providerId: 'ok', attempts: 2 });
    expect(provider.count(TOKEN)).toBe(2);
    const [first, second] = bearerOf(MESSAGING);
    expect(first).not.toBe(second);
    expect(clock.sleeps).toEqual([]);
  });

  it('after a 401 and a refresh, a 503 with the fresh token is retried as usual', async () => {
    provider.handlers[MESSAGING] = (_r, n) => (n === 1 ? { status: 401 } : n === 2 ? { status: 503 } : { body: { id: 'after-refresh' } });
    const r = await make().send(interactive);
    expect(r).toMatchObject({ ok: true, providerId: 'after-refresh', attempts: 3 });
    expect(provider.count(TOKEN)).toBe(2);
    const [, second, third] = bearerOf(MESSAGING);
    expect(third).toBe(second);
    expect(clock.sleeps).toHaveLength(1);
  });

  it('a 401 that persists is retried with a fresh token and backoff within the retry budget, then fails as retryable; the token is nowhere in it', async () => {
    provider.handlers[MESSAGING] = (req) => ({ status: 401, body: { error: { code: 190, message: `token ${String(req.headers['authorization']).slice(7)} is invalid` } } });
    const f = failed(await make().send(interactive));
    // The first refusal is retried at once (not counted); the next ones back off like a 503, within maxAttempts (3).
    expect(f).toMatchObject({ kind: 'retryable', status: 401, attempts: 4 });
    expect(f.auth).toBeUndefined();
    expect(f.reason).toMatch(/refused the access token 4 times/);
    expect(provider.count(TOKEN)).toBe(4);
    expect(provider.count(MESSAGING)).toBe(4);
    expect(clock.sleeps).toHaveLength(2);
    expect(new Set(bearerOf(MESSAGING)).size).toBe(4);
    for (const bearer of bearerOf(MESSAGING)) expect(JSON.stringify(f)).not.toContain(String(bearer).slice(7));
  });

  it('a token refused twice (revoked again) gets through on the third, with one backoff', async () => {
    provider.handlers[MESSAGING] = (_r, n) => (n <= 2 ? { status: 401 } : { body: { id: 'third' } });
    const r = await make().send(interactive);
    expect(r).toMatchObject({ ok: true, providerId: 'third', attempts: 3 });
    expect(provider.count(TOKEN)).toBe(3);
    expect(clock.sleeps).toHaveLength(1);
  });

  it('with a static messaging token, a 401 fails at once as an auth failure', async () => {
    provider.handlers[MESSAGING] = () => ({ status: 401 });
    const f = failed(await make({ messagingToken: { token: 'static-tok' } }).send(interactive));
    expect(f).toMatchObject({ auth: true, status: 401, attempts: 1 });
    expect(f.reason).not.toContain('static-tok');
    expect(bearerOf(MESSAGING)).toEqual(['Bearer static-tok']);
    expect(provider.count(TOKEN)).toBe(0);
  });

  it('a separate messaging token source has its own token', async () => {
    const a = make({ messagingToken: { authUrl: provider.authUrl, clientId: 'wa', clientSecret: 'wa-secret', authMethod: 'basic' } });
    await a.send(interactive);
    await a.send(sms);
    expect(provider.count(TOKEN)).toBe(2);
    expect(bearerOf(MESSAGING)[0]).not.toBe(bearerOf(SMS)[0]);
  });

  it('invalid_client fails fast: one token request, no retry loop, no send', async () => {
    provider.handlers[TOKEN] = () => ({ status: 401, body: { error: 'invalid_client' } });
    const f = failed(await make().send(interactive));
    expect(f).toMatchObject({ kind: 'permanent', auth: true, providerCode: 'invalid_client', attempts: 0 });
    expect(f.reason).not.toContain('s3cr3t-value');
    expect(provider.count(TOKEN)).toBe(1);
    expect(provider.count(MESSAGING)).toBe(0);
    expect(clock.sleeps).toEqual([]);
  });

  it('500 is retried with backoff, then succeeds', async () => {
    provider.handlers[MESSAGING] = (_r, n) => (n < 3 ? { status: 500 } : { body: { id: 'third' } });
    expect(await make().send(interactive)).toMatchObject({ ok: true, providerId: 'third', attempts: 3 });
    expect(clock.sleeps).toHaveLength(2);
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(2);
  });

  it('429 with Retry-After is retried after exactly that long, then succeeds', async () => {
    provider.handlers[MESSAGING] = (_r, n) => (n === 1 ? { status: 429, headers: { 'retry-after': '3' } } : { body: { id: 'later' } });
    expect(await make().send(interactive)).toMatchObject({ ok: true, attempts: 2 });
    expect(clock.sleeps).toEqual([3000]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const at = new Date(clock.now() + 4000).toUTCString();
    provider.handlers[MESSAGING] = (_r, n) => (n === 1 ? { status: 503, headers: { 'retry-after': at } } : { body: {} });
    expect(await make().send(interactive)).toMatchObject({ ok: true, attempts: 2 });
    expect(clock.sleeps).toEqual([4000]);
  });

  it('a Retry-After beyond maxRetryAfterMs ends the call as retryable, carrying it', async () => {
    provider.handlers[MESSAGING] = () => ({ status: 429, headers: { 'retry-after': '3600' } });
    const f = failed(await make().send(interactive));
    expect(f).toMatchObject({ kind: 'retryable', status: 429, retryAfterMs: 3_600_000, attempts: 1 });
    expect(clock.sleeps).toEqual([]);
  });

  it('retries stay bounded by maxAttempts', async () => {
    provider.handlers[MESSAGING] = () => ({ status: 502 });
    const f = failed(await make({ retry: { maxAttempts: 4 } }).send(interactive));
    expect(f).toMatchObject({ kind: 'retryable', status: 502, attempts: 4 });
    expect(provider.count(MESSAGING)).toBe(4);
  });

  it('a permanent 400 is not retried', async () => {
    provider.handlers[MESSAGING] = () => ({ status: 400, body: { error: { code: 100, message: 'Invalid parameter' } } });
    const f = failed(await make().send(interactive));
    expect(f).toMatchObject({ kind: 'permanent', status: 400, providerCode: 100, attempts: 1 });
    expect(f.reason).toContain('Invalid parameter');
    expect(provider.count(MESSAGING)).toBe(1);
  });

  it.each([
    [131047, 400, 'permanent', 1],
    [131026, 500, 'permanent', 1],
    [130429, 400, 'retryable', 3],
    [131056, 400, 'retryable', 3],
  ] as const)('Meta error %i with HTTP %i is %s', async (code, status, kind, attempts) => {
    provider.handlers[MESSAGING] = () => ({ status, body: { error: { code, message: 'm', error_data: { details: 'd' } } } });
    expect(failed(await make().send(interactive))).toMatchObject({ kind, providerCode: code, attempts, reason: expect.stringContaining('m: d') as unknown });
  });

  it('network errors are retried', async () => {
    provider.handlers[MESSAGING] = (_r, n) => (n === 1 ? { destroy: true } : { body: { id: 'x' } });
    expect(await make().send(interactive)).toMatchObject({ ok: true, attempts: 2 });
  });

  it('an unreachable provider is a retryable failure, not a throw', async () => {
    const base = provider.baseUrl;
    await provider.close();
    const f = failed(await make({ baseUrl: base, messagingToken: { token: 't-static' }, retry: { maxAttempts: 2 } }).send(interactive));
    expect(f).toMatchObject({ kind: 'retryable', attempts: 2 });
    expect(f.reason).toMatch(/network error/);
    provider = await startProvider();
  });

  it('an aborted send is not retried', async () => {
    provider.handlers[MESSAGING] = () => ({ status: 500 });
    const ac = new AbortController();
    ac.abort();
    const f = failed(await make().send(interactive, { signal: ac.signal }));
    expect(f).toMatchObject({ kind: 'retryable', reason: 'aborted by the caller', attempts: 0 });
  });
});

describe('createHttpAdapter: SMS', () => {
  it('posts the SMS body and records code, mailingId and result', async () => {
    const r = await make().send(sms);
    expect(r).toMatchObject({ ok: true, channel: 'sms', providerId: '42', sms: { code: 0, mailingId: 42, result: 'Applied' } });
    const req = provider.seen.find((s) => s.path === SMS)!;
    expect(JSON.parse(req.body)).toEqual(sms.request);
    expect(req.headers['content-type']).toBe('application/json');
  });

  it('code 15 with HTTP 200 is a permanent failure carrying the code and hint', async () => {
    provider.handlers[SMS] = () => ({ status: 200, body: { code: 15, hint: 'Top up', message: 'Insufficient credit' } });
    const f = failed(await make().send(sms));
    expect(f).toMatchObject({ kind: 'permanent', status: 200, providerCode: 15, hint: 'Top up', attempts: 1 });
    expect(f.reason).toContain('Insufficient credit');
    expect(provider.count(SMS)).toBe(1);
  });

  it('a negative code compares by absolute value', async () => {
    provider.handlers[SMS] = () => ({ body: { code: -13, message: 'Bad request format' } });
    expect(failed(await make().send(sms))).toMatchObject({ kind: 'permanent', providerCode: 13 });
  });

  it('code 19 is retryable: retried, then succeeds', async () => {
    provider.handlers[SMS] = (_r, n) => (n === 1 ? { body: { code: 19, hint: 'retry', message: 'Server error' } } : { body: { code: 0, mailingId: 9, result: 'Applied' } });
    expect(await make().send(sms)).toMatchObject({ ok: true, attempts: 2, providerId: '9' });
  });

  it('code 19 every time ends as a retryable failure', async () => {
    provider.handlers[SMS] = () => ({ body: { code: 19, message: 'Server error' } });
    expect(failed(await make().send(sms))).toMatchObject({ kind: 'retryable', providerCode: 19, attempts: 3 });
  });

  it('code 1 (unauthorized) refreshes the token, like a 401', async () => {
    provider.handlers[SMS] = () => ({ body: { code: 1, message: 'Unauthorized' } });
    const f = failed(await make().send(sms));
    expect(f).toMatchObject({ kind: 'retryable', providerCode: 1, attempts: 4 });
    expect(provider.count(TOKEN)).toBe(4);
  });

  it('the token never appears in a failure reason, even when the provider echoes it', async () => {
    provider.handlers[SMS] = (req) => ({ status: 400, body: { code: 13, hint: String(req.headers['authorization']), message: `bad ${String(req.headers['authorization'])}` } });
    const f = failed(await make().send(sms));
    const token = String(bearerOf(SMS)[0]).slice(7);
    expect(f.reason).not.toContain(token);
    expect(f.hint).not.toContain(token);
    expect(JSON.stringify(f.raw)).not.toContain(token);
  });
});

describe('createHttpAdapter: what is kept of an answer', () => {
  const tokensSeen = () => bearerOf(MESSAGING).map((b) => String(b).slice(7));

  it('an identity provider echoing the form body keeps no form of the client secret in the failure', async () => {
    const secret = 'p+ss/w=rd with space';
    provider.handlers[TOKEN] = (req) => ({ status: 401, body: { error: 'invalid_client', error_description: `rejected ${req.body}` } });
    const f = failed(await make({ clientSecret: secret }).send(interactive));
    expect(f.auth).toBe(true);
    const kept = JSON.stringify(f); // what the outbox stores as the last error comes from this
    expect(kept).toContain('[redacted]');
    for (const form of [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)]) {
      expect(kept).not.toContain(form);
      expect(kept).not.toContain(JSON.stringify(form).slice(1, -1));
    }
  });

  it('an accepted answer echoing the token and the client secret keeps neither', async () => {
    provider.handlers[MESSAGING] = (req) => ({ body: { id: 'ok', echo: { auth: String(req.headers['authorization']), secret: 's3cr3t-value' } } });
    const r = await make().send(interactive);
    expect(r.ok).toBe(true);
    const kept = JSON.stringify(r.raw);
    expect(kept).toContain('[redacted]');
    expect(kept).not.toContain(tokensSeen()[0]);
    expect(kept).not.toContain('s3cr3t-value');
  });

  it('after a refresh, neither the refused token nor the fresh one is kept, on success or failure', async () => {
    let refused = '';
    provider.handlers[MESSAGING] = (req, n) => {
      const auth = String(req.headers['authorization']);
      if (n === 1) {
        refused = auth;
        return { status: 401 };
      }
      return n === 2 ? { status: 503, body: { old: refused, now: auth } } : { body: { id: 'ok', old: refused, now: auth } };
    };
    const r = await make().send(interactive);
    expect(r.ok).toBe(true);
    const [first, second] = tokensSeen();
    expect(first).not.toBe(second);
    for (const t of [first, second]) expect(JSON.stringify(r.raw)).not.toContain(t);

    provider.handlers[MESSAGING] = (req) => ({ status: 400, body: { error: { message: `nope ${refused} ${String(req.headers['authorization'])} s3cr3t-value` } } });
    const f = failed(await adapter!.send(interactive));
    for (const t of [first, second, 's3cr3t-value']) expect(JSON.stringify(f)).not.toContain(t);
  });
  it('keeps no NUL and no unkeepable id from an answer in what goes to columns of their own', async () => {
    provider.handlers[SMS] = () => ({ body: { code: 0, mailingId: `m\u0000${'x'.repeat(5_000)}`, result: 'Applied\u0000' } });
    const r = await make().send(sms);
    expect(r).toMatchObject({ ok: true, providerId: undefined, sms: { mailingId: null, result: 'Applied\ufffd' } });
    provider.handlers[MESSAGING] = () => ({ status: 400, body: { error: { code: 'bad\u0000code', message: 'no\u0000pe' } } });
    const f = failed(await adapter!.send(interactive));
    expect(`${f.reason} ${String(f.providerCode)}`).not.toContain('\u0000');
  });
});

describe('createHttpAdapter: options', () => {
  it('requires credentials unless a token source is given', () => {
    expect(() => createHttpAdapter({ baseUrl: provider.baseUrl })).toThrow(ConfigError);
    expect(() => createHttpAdapter({ baseUrl: 'not a url', smsToken: { token: 'x' } })).toThrow(ConfigError);
  });

  it('Basic auth sends the header and not the body credentials', async () => {
    await make({ authMethod: 'basic' }).send(sms);
    const req = provider.seen.find((s) => s.path === TOKEN)!;
    expect(req.headers['authorization']).toBe(`Basic ${Buffer.from('client-1:s3cr3t-value').toString('base64')}`);
    expect(req.body).not.toContain('client_id');
    expect(req.body).not.toContain('s3cr3t-value');
  });

  it('a timeout is a retryable failure', async () => {
    provider.handlers[MESSAGING] = () => new Promise(() => {});
    const f = failed(await make({ timeoutMs: 200, retry: { maxAttempts: 1 } }).send(interactive));
    expect(f).toMatchObject({ kind: 'retryable', attempts: 1 });
    expect(f.reason).toMatch(/network error \(UND_ERR_HEADERS_TIMEOUT\)/);
  });

  it('logs retries and failures without the token or the secret', async () => {
    const lines: string[] = [];
    const log = (obj: object, msg?: string) => void lines.push(JSON.stringify(obj) + (msg ?? ''));
    provider.handlers[MESSAGING] = (req, n) =>
      n === 1 ? { status: 500, body: String(req.headers['authorization']) } : { status: 401, body: { error: { message: String(req.headers['authorization']) } } };
    const f = failed(await make({ logger: { debug: log, info: log, warn: log, error: log } }).send(interactive));
    expect(f.status).toBe(401);
    expect(lines.some((l) => l.includes('retrying'))).toBe(true);
    expect(lines.some((l) => l.includes('send failed'))).toBe(true);
    const all = lines.join('\n');
    for (const bearer of bearerOf(MESSAGING)) expect(all).not.toContain(String(bearer).slice(7));
    expect(all).not.toContain('s3cr3t-value');
  });

  it('a throwing onEvent listener does not break sends', async () => {
    expect(
      await make({
        onEvent: () => {
          throw new Error('boom');
        },
      }).send(interactive),
    ).toMatchObject({ ok: true });
  });
});
