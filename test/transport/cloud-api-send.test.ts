import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { buttons, flow, list, template, text, type Message } from '../../src/messages/index.js';
import {
  createCloudApiProvider,
  createHttpAdapter,
  withPacing,
  type CloudApiProviderOptions,
  type Outbound,
  type Provider,
  type SendAdapter,
  type SendFailed,
  type SendResult,
  type TransportEvent,
} from '../../src/transport/index.js';
import { accepted, capturingLogger, metaError, startCloud, type FakeCloud } from './cloud-api-fake.js';
import { FakeClock, SMS, startProvider } from './helpers.js';

const TOKEN = 'EAAG-default-secret-token-0001';
const USER = '5215511111111';
let cloud: FakeCloud;
let clock: FakeClock;
let provider: Provider | undefined;
let events: TransportEvent[];
let logger: ReturnType<typeof capturingLogger>;

beforeEach(async () => {
  cloud = await startCloud();
  clock = new FakeClock();
  events = [];
  logger = capturingLogger();
});
afterEach(async () => {
  await provider?.close();
  provider = undefined;
  await cloud.close();
});

function make(extra: Partial<CloudApiProviderOptions> = {}): Provider {
  provider = createCloudApiProvider({ baseUrl: cloud.baseUrl, token: TOKEN, defaultNumberId: '1000001', clock, logger, onEvent: (e) => events.push(e), ...extra });
  return provider;
}

/** The outbound of `m` to `to`, built by the provider's own request(). */
function outbound(p: Provider, m: Message, extra: { numberId?: string; from?: string; to?: string } = {}): Outbound {
  const request = p.request(m, { to: extra.to ?? USER, from: extra.from ?? '5215500000000', flowToken: 'conv-token-1' }) as Record<string, unknown>;
  return { channel: 'interactive', request, numberId: extra.numberId, from: extra.from };
}

function failed(r: SendResult): SendFailed {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r)}`);
  return r;
}

describe('Cloud API provider: sending', () => {
  it('declares what it carries', () => {
    const p = make();
    expect(p.name).toBe('cloud-api');
    expect(p.features).toEqual({ text: true, templates: true, window: true, readReceipts: true, sms: false });
  });

  it.each<[string, Message]>([
    ['text', text('Hello there')],
    ['list', list({ body: 'Pick', button: 'Open', rows: [{ id: 'a', title: 'A' }] })],
    ['buttons with an image', buttons({ image: 'https://cdn.example.com/a.png', body: 'Pick', buttons: [{ id: 'y', title: 'Yes' }] })],
    ['buttons with a video', buttons({ video: 'https://cdn.example.com/a.mp4', body: 'Pick', buttons: [{ id: 'y', title: 'Yes' }] })],
    ['buttons with a document', buttons({ document: { link: 'https://cdn.example.com/a.pdf', fileName: 'a.pdf' }, body: 'Pick', buttons: [{ id: 'y', title: 'Yes' }] })],
    ['a navigate flow', flow({ body: 'Book', flowId: '77', cta: 'Book', screen: 'START' })],
    ['a data_exchange flow', flow({ body: 'Book', flowId: '77', cta: 'Book', action: 'data_exchange' })],
    ['a template', template({ name: 'hello_world', language: 'en_US', components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ana' }] }] })],
  ])('posts %s exactly as request() built it, with the bearer token, and keeps the wamid', async (_, m) => {
    const p = make();
    const o = outbound(p, m, { numberId: '1000001' });
    const r = await p.send(o);
    expect(r).toMatchObject({ ok: true, channel: 'interactive', status: 200, attempts: 1 });
    expect(r.ok && r.providerId).toMatch(/^wamid\.\d+$/);
    expect(r.ok && r.raw).toMatchObject({ messaging_product: 'whatsapp', messages: [{ id: r.ok ? r.providerId : '' }] });
    expect(cloud.seen).toHaveLength(1);
    const [seen] = cloud.seen;
    expect(seen!.path).toBe('/v23.0/1000001/messages');
    expect(seen!.headers['authorization']).toBe(`Bearer ${TOKEN}`);
    expect(seen!.headers['content-type']).toBe('application/json');
    expect(seen!.json).toEqual(o.request);
    expect(events.filter((e) => e.type === 'send')).toMatchObject([{ type: 'send', channel: 'interactive', ok: true, status: 200 }]);
  });

  it('sends each number with its own token; an unlisted number with the default one', async () => {
    const p = make({
      numbers: [
        { numberId: '111', token: 'EAAG-token-of-number-A', displayNumber: '5215500000111' },
        { numberId: '222', token: 'EAAG-token-of-number-B' },
      ],
    });
    const m = text('hi');
    await p.send(outbound(p, m, { numberId: '111' }));
    await p.send(outbound(p, m, { numberId: '222' }));
    await p.send(outbound(p, m, { from: '5215500000111' }));
    await p.send(outbound(p, m, { numberId: '333' }));
    await p.send(outbound(p, m));
    expect(cloud.seen.map((s) => [s.path, s.headers['authorization']])).toEqual([
      ['/v23.0/111/messages', 'Bearer EAAG-token-of-number-A'],
      ['/v23.0/222/messages', 'Bearer EAAG-token-of-number-B'],
      ['/v23.0/111/messages', 'Bearer EAAG-token-of-number-A'],
      ['/v23.0/333/messages', `Bearer ${TOKEN}`],
      ['/v23.0/1000001/messages', `Bearer ${TOKEN}`],
    ]);
  });

  it('without a phone_number_id for the number, fails as invalid before any request', async () => {
    const p = make({ defaultNumberId: undefined });
    const r = failed(await p.send(outbound(p, text('hi'), { from: '5215500000999' })));
    expect(r).toMatchObject({ kind: 'permanent', class: 'invalid', attempts: 0 });
    expect(r.reason).toContain('No Cloud API phone_number_id is known for the business number 5215500000999');
    expect(failed(await p.send(outbound(p, text('hi'), { numberId: '12/../x' }))).reason).toContain('is not a Cloud API phone_number_id');
    expect(cloud.seen).toHaveLength(0);
  });

  it('without a token for the number, fails as auth, naming the token, before any request', async () => {
    const p = make({ token: undefined, numbers: [{ numberId: '111', token: 'EAAG-own-token-111', tokenName: 'ACME_TOKEN' }] });
    const r = failed(await p.send(outbound(p, text('hi'), { numberId: '222' })));
    expect(r).toMatchObject({ kind: 'permanent', class: 'auth', auth: true, attempts: 0 });
    expect(r.reason).toBe('No Cloud API access token for phone_number_id 222: set COLLOQUY_CLOUD_API_TOKEN');
    expect((await p.send(outbound(p, text('hi'), { numberId: '111' }))).ok).toBe(true);
    expect(cloud.seen).toHaveLength(1);
  });

  it('refuses a body another provider built, without sending it', async () => {
    const p = make();
    const r = failed(await p.send({ channel: 'interactive', request: { from: '5215500000000', to: USER, type: 'contacts', listMessages: {} } as never }));
    expect(r).toMatchObject({ kind: 'permanent', class: 'invalid', attempts: 0 });
    expect(r.reason).toContain('not a Cloud API message body');
    expect(cloud.seen).toHaveLength(0);
  });
});

describe('Cloud API provider: errors by class', () => {
  it.each([
    ['401 with 190', 401, 190, 'auth', 'permanent'],
    ['400 with 190', 400, 190, 'auth', 'permanent'],
    ['403 with 10 (permission)', 403, 10, 'auth', 'permanent'],
    ['131047 (window)', 400, 131047, 'window', 'permanent'],
    ['131026 (undeliverable)', 400, 131026, 'undeliverable', 'permanent'],
    ['100 (invalid parameter)', 400, 100, 'invalid', 'permanent'],
    ['131009 (parameter value)', 400, 131009, 'invalid', 'permanent'],
    ['131008 (missing parameter)', 400, 131008, 'invalid', 'permanent'],
    ['132001 (template missing)', 404, 132001, 'invalid', 'permanent'],
    ['133010 (number not registered)', 400, 133010, 'invalid', 'permanent'],
    ['an unknown 4xx code', 400, 987654, 'invalid', 'permanent'],
    ['131000 (something went wrong)', 500, 131000, 'transient', 'retryable'],
    ['130429 (throughput)', 400, 130429, 'throughput', 'retryable'],
    ['131056 (pair rate)', 400, 131056, 'pair-rate', 'retryable'],
  ] as const)('%s', async (_, status, code, cls, kind) => {
    cloud.handler = () => metaError(status, code, `(#${code}) something`, `details of ${code}`);
    const p = make({ retry: { maxAttempts: 1 } });
    const r = failed(await p.send(outbound(p, text('hi'))));
    expect(r).toMatchObject({ channel: 'interactive', kind, class: cls, status, providerCode: code, attempts: 1 });
    expect(r.reason).toContain(`(#${code}) something: details of ${code}`);
    expect(r.auth).toBe(cls === 'auth' ? true : undefined);
    if (cls === 'auth') expect(r.reason).toMatch(/^COLLOQUY_CLOUD_API_TOKEN was refused by the Cloud API for phone_number_id 1000001 \(HTTP \d+, code /);
    if (cls === 'throughput') expect(r.retryAfterMs).toBe(1000);
    if (cls === 'pair-rate') expect(r.retryAfterMs).toBe(6000);
    if (kind === 'permanent') expect(r.retryAfterMs).toBeUndefined();
  });

  it('a 5xx without a body is transient; a 429 without a code too', async () => {
    cloud.handler = (_, n) => (n === 1 ? { status: 503 } : { status: 429, body: 'slow down' });
    const p = make({ retry: { maxAttempts: 1 } });
    expect(failed(await p.send(outbound(p, text('a'))))).toMatchObject({ class: 'transient', kind: 'retryable', status: 503, reason: 'Cloud API answered HTTP 503' });
    expect(failed(await p.send(outbound(p, text('b'))))).toMatchObject({ class: 'transient', kind: 'retryable', status: 429 });
  });

  it('a refused token is never retried, whatever the retry budget', async () => {
    cloud.handler = () => metaError(401, 190, 'Error validating access token: Session has expired');
    const p = make({ retry: { maxAttempts: 5 } });
    const r = failed(await p.send(outbound(p, text('hi'))));
    expect(r).toMatchObject({ class: 'auth', kind: 'permanent', attempts: 1 });
    expect(cloud.seen).toHaveLength(1);
    expect(clock.sleeps).toEqual([]);
  });

  it('131000 is retried with backoff, then accepted', async () => {
    cloud.handler = (req, n) => (n === 1 ? metaError(500, 131000, 'Something went wrong') : accepted(req, n));
    const p = make({ retry: { random: () => 0 } });
    const r = await p.send(outbound(p, text('hi')));
    expect(r).toMatchObject({ ok: true, attempts: 2 });
    expect(clock.sleeps).toEqual([100]);
    expect(events.filter((e) => e.type === 'retry')).toMatchObject([{ endpoint: 'cloud-api', attempt: 1, delayMs: 100, status: 500 }]);
  });

  it('a 5xx honours Retry-After, and ends retryable once the attempts are spent', async () => {
    cloud.handler = () => ({ ...metaError(503, 2, 'Service temporarily unavailable'), headers: { 'retry-after': '2' } });
    const p = make();
    const r = failed(await p.send(outbound(p, text('hi'))));
    expect(r).toMatchObject({ class: 'transient', kind: 'retryable', attempts: 3, retryAfterMs: 2000 });
    expect(clock.sleeps).toEqual([2000, 2000]);
  });

  it('a dropped connection is transient and retried', async () => {
    cloud.handler = (req, n) => (n === 1 ? { destroy: true } : accepted(req, n));
    const p = make();
    expect(await p.send(outbound(p, text('hi')))).toMatchObject({ ok: true, attempts: 2 });
  });

  it('a timeout is transient', async () => {
    cloud.handler = () => ({ hang: true });
    const p = make({ timeoutMs: 100, retry: { maxAttempts: 1 } });
    const r = failed(await p.send(outbound(p, text('hi'))));
    expect(r).toMatchObject({ class: 'transient', kind: 'retryable', attempts: 1 });
    expect(r.reason).toMatch(/^Cloud API not reached for phone_number_id 1000001: network error \(/);
  });

  it('130429 is retried after the number\u2019s pause, then accepted', async () => {
    cloud.handler = (req, n) => (n === 1 ? metaError(400, 130429, 'Rate limit hit') : accepted(req, n));
    const p = make();
    expect(await p.send(outbound(p, text('hi')))).toMatchObject({ ok: true, attempts: 2 });
    expect(clock.sleeps).toEqual([1000]);
  });

  it('no token appears in a reason, a result or a log line, even when the Cloud API echoes it', async () => {
    const own = 'EAAG-number-token-echoed-9999';
    cloud.handler = (req) => metaError(req.path.includes('/222/') ? 401 : 500, req.path.includes('/222/') ? 190 : 131000, `bad: ${req.headers['authorization']}`, `token ${own} / ${TOKEN}`);
    const p = make({ numbers: [{ numberId: '222', token: own }], retry: { maxAttempts: 2 } });
    const results = [
      await p.send(outbound(p, text('a'))),
      await p.send(outbound(p, text('b'), { numberId: '222' })),
      await p.markRead!({ messageId: 'wamid.in', from: '1', numberId: '222', typing: true }),
    ];
    expect(results.every((r) => !r.ok)).toBe(true);
    const everything = JSON.stringify({ results, events, lines: logger.lines });
    expect(everything).toContain('[redacted]');
    expect(everything).not.toContain(TOKEN);
    expect(everything).not.toContain(own);
    expect(failed(results[1]!).reason).toMatch(/^numbers\[0\]\.token was refused/);
    expect(logger.lines.some((l) => l.startsWith('warn') && l.includes('send failed'))).toBe(true);
  });
});

describe('Cloud API provider: read receipts', () => {
  it('marks a message read with the typing indicator, or without it', async () => {
    const p = make({ numbers: [{ numberId: '444', displayNumber: '5215500000444', token: 'EAAG-read-token-444' }] });
    expect(await p.markRead!({ messageId: 'wamid.IN1', from: '5215500000000', numberId: '1000001', typing: true })).toMatchObject({
      ok: true,
      channel: 'interactive',
      status: 200,
      raw: { success: true },
    });
    expect(await p.markRead!({ messageId: 'wamid.IN2', from: '5215500000444', typing: false })).toMatchObject({ ok: true });
    expect(cloud.seen.map((s) => [s.path, s.headers['authorization'], s.json])).toEqual([
      ['/v23.0/1000001/messages', `Bearer ${TOKEN}`, { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.IN1', typing_indicator: { type: 'text' } }],
      ['/v23.0/444/messages', 'Bearer EAAG-read-token-444', { messaging_product: 'whatsapp', status: 'read', message_id: 'wamid.IN2' }],
    ]);
  });

  it('never throws: a refused token, a missing number or id are failures', async () => {
    cloud.handler = () => metaError(401, 190, 'expired');
    const p = make({ defaultNumberId: undefined });
    expect(failed(await p.markRead!({ messageId: 'wamid.X', from: '5215500000000', numberId: '1', typing: true }))).toMatchObject({ class: 'auth', auth: true, attempts: 1 });
    expect(failed(await p.markRead!({ messageId: 'wamid.X', from: '5215500000000', typing: true }))).toMatchObject({ class: 'invalid', attempts: 0 });
    expect(failed(await p.markRead!({ messageId: '', from: '5215500000000', numberId: '1', typing: true }))).toMatchObject({ class: 'invalid', attempts: 0 });
  });
});

describe('Cloud API provider: SMS, pacing wrapper, close, options', () => {
  it('without an SMS adapter, an SMS fails permanently and says why', async () => {
    const p = make();
    const r = failed(await p.send({ channel: 'sms', request: { msisdns: [USER], message: 'hi' } }));
    expect(r).toMatchObject({ channel: 'sms', kind: 'permanent', attempts: 0 });
    expect(r.reason).toContain('No SMS channel is configured');
  });

  it('with one, SMS goes through it, and close() closes it', async () => {
    const seed = await startProvider();
    try {
      const inner = createHttpAdapter({ baseUrl: seed.baseUrl, authUrl: seed.authUrl, clientId: 'c', clientSecret: 'sms-secret-value', clock });
      let closed = 0;
      const sms: SendAdapter = {
        send: (o, opts) => inner.send(o, opts),
        close: () => {
          closed++;
          return inner.close();
        },
      };
      const p = make({ sms });
      expect(p.features.sms).toBe(true);
      expect(await p.send({ channel: 'sms', request: { msisdns: [USER], message: 'hi' } })).toMatchObject({ ok: true, channel: 'sms', providerId: '42' });
      expect(seed.count(SMS)).toBe(1);
      await p.close();
      provider = undefined;
      expect(closed).toBe(1);
    } finally {
      await seed.close();
    }
  });

  it('withPacing keeps it a provider: name, features, request and markRead pass through', async () => {
    const paced = withPacing(make(), { perSecond: 10, clock });
    expect(paced.name).toBe('cloud-api');
    expect(paced.features.templates).toBe(true);
    const o = outbound(paced, text('hi'));
    expect(o.request).toMatchObject({ type: 'text', text: { body: 'hi' } });
    expect(await paced.send(o)).toMatchObject({ ok: true });
    expect(await paced.markRead!({ messageId: 'wamid.1', from: '1', numberId: '1000001', typing: false })).toMatchObject({ ok: true });
  });

  it.each<[string, Partial<CloudApiProviderOptions>, string]>([
    ['a base URL that is not http(s)', { baseUrl: 'ftp://graph.example.com' }, 'baseUrl'],
    ['a phone_number_id that is not digits', { numbers: [{ numberId: 'abc' }] }, 'numbers[0].numberId'],
    ['a number listed twice', { numbers: [{ numberId: '1' }, { numberId: '1' }] }, 'numbers[1].numberId'],
    ['a send rate of 0', { sendRate: 0 }, 'sendRate'],
    ['a negative pace', { numbers: [{ numberId: '1', userPaceMs: -1 }] }, 'numbers[0].userPaceMs'],
    ['an empty token', { token: ' ' }, 'token'],
  ])('refuses %s', (_, bad, variable) => {
    expect(() => make(bad)).toThrow(ConfigError);
    try {
      make(bad);
    } catch (e) {
      expect((e as ConfigError).variable).toBe(variable);
    }
  });
});
