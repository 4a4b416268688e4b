/**
 * The conformance kit can fail: a provider broken in one way (it throws from send(), calls refused
 * credentials retryable, leaks its secret, builds what it should refuse…) makes the check of that
 * part of the contract reject with a message that says what to fix, while a sound one passes.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, MessageValidationError } from '../../src/errors.js';
import { describeProvider, providerContract, ProviderContractError, type ContractCheck, type ConformanceOptions, type ProviderSetup, type TestRunner } from '../../src/simulator/testing.js';
import { SANDBOX_CLIENT_SECRET } from '../../src/sandbox/index.js';
import type { Provider } from '../../src/transport/provider.js';
import type { SendResult } from '../../src/transport/types.js';
import { seedSetup } from './seed-upstream.js';

/** The seed setup, with the provider changed by `change`. */
function broken(change: (p: Provider) => Partial<Provider>): ProviderSetup {
  return async () => {
    const made = await seedSetup();
    const p = made.provider;
    const base: Provider = { name: p.name, features: p.features, request: (m, a) => p.request(m, a), send: (o, opts) => p.send(o, opts), close: () => p.close() };
    return { ...made, provider: { ...base, ...change(p) } };
  };
}

/** The check whose name starts with `prefix`. */
function check(setup: ProviderSetup, prefix: string, options: ConformanceOptions = {}): ContractCheck {
  const found = providerContract(setup, options).find((c) => c.name.startsWith(prefix));
  if (found === undefined) throw new Error(`no check named "${prefix}…"`);
  return found;
}

async function rejection(c: ContractCheck): Promise<ProviderContractError> {
  const err = await c.run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderContractError);
  return err as ProviderContractError;
}

/** The secret the seed setup declares. */
const SECRET = SANDBOX_CLIENT_SECRET;

describe('the conformance kit fails a broken provider', () => {
  it('send() that throws: the accept check says send() must never throw', async () => {
    const setup = broken(() => ({ send: () => Promise.reject(new Error('socket hang up')) }));
    const err = await rejection(check(setup, 'send() to an accepting upstream'));
    expect(err.message).toMatch(/send\(\) threw when the upstream accepts \(Error: socket hang up\); send\(\) must never throw/);
    expect(err.check).toMatch(/^send\(\) to an accepting upstream/);
  });

  it('send() that throws only when the upstream is down: the down check fails, the accept check passes', async () => {
    let down = false;
    const setup: ProviderSetup = async () => {
      const made = await seedSetup();
      const answer = made.upstream.answer;
      const p = made.provider;
      return {
        ...made,
        upstream: {
          ...made.upstream,
          answer: (o) => {
            down = o === 'down';
            return answer(o);
          },
        },
        provider: { ...p, send: async (o, opts) => (down ? Promise.reject(new TypeError('fetch failed')) : p.send(o, opts)) },
      };
    };
    await expect(check(setup, 'send() to an accepting upstream').run()).resolves.toEqual({ status: 'passed' });
    expect((await rejection(check(setup, 'send() to an upstream that does not answer'))).message).toMatch(/threw when the upstream answers "down" \(TypeError: fetch failed\)/);
  });

  it('refused credentials called retryable: the auth check says permanent, never retried', async () => {
    const setup = broken((p) => ({ send: async (o, opts) => relabel(await p.send(o, opts), { kind: 'retryable', auth: undefined }) }));
    const err = await rejection(check(setup, 'send() with refused credentials'));
    expect(err.message).toMatch(/failed as "retryable" when the upstream answered "auth" \(refused credentials\); it must be "permanent" because the runtime never retries it/);
  });

  it('refused credentials without auth: true: the auth check asks for it', async () => {
    const setup = broken((p) => ({ send: async (o, opts) => relabel(await p.send(o, opts), { auth: undefined }) }));
    expect((await rejection(check(setup, 'send() with refused credentials'))).message).toMatch(/without auth: true/);
  });

  it('a wrong class: the throughput check names the class the runtime needs', async () => {
    const setup = broken((p) => ({ send: async (o, opts) => relabel(await p.send(o, opts), { class: 'invalid' }) }));
    expect((await rejection(check(setup, 'send() meeting the throughput limit'))).message).toMatch(/gave class "invalid" .*use class "throughput" \(or none\)/);
  });

  it('a secret in a failure: the check says which declared secret leaked, without showing it', async () => {
    const setup = broken((p) => ({ send: async (o, opts) => relabel(await p.send(o, opts), (r) => ({ reason: `${r.reason} (client_secret=${SECRET})` })) }));
    const err = await rejection(check(setup, 'send() with a parameter the provider refuses'));
    expect(err.message).toMatch(/the result's reason contains secret #1 of those the setup declared/);
    expect(err.message).not.toContain(SECRET);
  });

  it('a provider that keeps the window but does not mark 131047: the window check asks for class "window"', async () => {
    const setup = broken((p) => ({ features: { ...p.features, window: true } }));
    expect((await rejection(check(setup, 'send() outside the 24-hour window'))).message).toMatch(/without class "window" although features.window is true/);
    await expect(check(seedSetup, 'send() outside the 24-hour window').run()).resolves.toEqual({ status: 'passed' });
  });

  it('a send that reports ok but reaches nothing, or reaches it twice: the accept check counts', async () => {
    const none = broken(() => ({ send: async (o) => ({ ok: true, channel: o.channel, status: 200, providerId: 'wamid.fake', raw: {}, attempts: 1 }) }));
    expect((await rejection(check(none, 'send() to an accepting upstream'))).message).toMatch(/delivered 0 messages to the upstream, not 1: the send reported ok but nothing reached/);
    const twice = broken((p) => ({
      send: async (o, opts) => {
        await p.send(o, opts);
        return p.send(o, opts);
      },
    }));
    expect((await rejection(check(twice, 'send() to an accepting upstream'))).message).toMatch(/delivered 2 messages to the upstream, not 1: the provider sent it again/);
  });

  it('a send that never settles: the check fails after the call timeout', async () => {
    const setup = broken(() => ({ send: () => new Promise<SendResult>(() => undefined) }));
    expect((await rejection(check(setup, 'send() to an accepting upstream', { callTimeoutMs: 50 }))).message).toMatch(/send\(\) when the upstream accepts did not settle within 50 ms/);
  });

  it('request() that builds what it should refuse, or throws a plain Error: the invalid check asks for MessageValidationError', async () => {
    const lax = broken((p) => ({ request: (m, a) => (m.kind === 'list' ? { to: a.to, list: m.listMessages } : p.request(m, a)) }));
    expect((await rejection(check(lax, 'request() throws MessageValidationError'))).message).toMatch(
      /request\(\) returned a body for a list with no rows .*must throw MessageValidationError naming the field/,
    );
    const thrower = broken(() => ({
      request: () => {
        throw new Error('bad list');
      },
    }));
    expect((await rejection(check(thrower, 'request() throws MessageValidationError'))).message).toMatch(/request\(\) threw Error: bad list for a list with no rows; throw MessageValidationError/);
    const pathless = broken(() => ({
      request: () => {
        throw new MessageValidationError([{ path: [], message: 'no' }]);
      },
    }));
    expect((await rejection(check(pathless, 'request() throws MessageValidationError'))).message).toMatch(/with no field path/);
  });

  it('a template built by a provider without templates: the template check asks for a refusal', async () => {
    const setup = broken((p) => ({ request: (m, a) => (m.kind === 'template' ? { to: a.to, template: m.template } : p.request(m, a)) }));
    expect((await rejection(check(setup, 'request() builds a template'))).message).toMatch(/returned a body for a template on a provider with features.templates false/);
  });

  it('a flow body without the conversation token: the flow check names address.flowToken', async () => {
    const setup = broken((p) => ({ request: (m, a) => p.request(m, { ...a, flowToken: 'another-token' }) }));
    expect((await rejection(check(setup, 'request() builds flows'))).message).toMatch(/does not carry the conversation's flow token \(address.flowToken\)/);
  });

  it('a body the upstream refuses: the build check shows the upstream reason', async () => {
    const setup = broken((p) => ({ request: (m, a) => ({ ...(p.request(m, a) as object), from: 'not-a-number' }) }));
    expect((await rejection(check(setup, 'request() builds a list'))).message).toMatch(
      /the upstream, answering "accept", refused the body request\(\) built for a list \(two sections\): Messaging endpoint answered HTTP 400/,
    );
  });

  it('malformed features, or markRead without readReceipts: the features check names them', async () => {
    const yes = broken((p) => ({ features: { ...p.features, text: 'yes' as unknown as boolean } }));
    expect((await rejection(check(yes, 'is a provider'))).message).toMatch(/features.text must be true or false/);
    const reader = broken(() => ({ markRead: async () => ({ ok: false, channel: 'interactive', kind: 'permanent', reason: 'no', attempts: 0 }) }));
    expect((await rejection(check(reader, 'is a provider'))).message).toMatch(/markRead is present but features.readReceipts is false/);
    const noReader = broken((p) => ({ features: { ...p.features, readReceipts: true } }));
    expect((await rejection(check(noReader, 'is a provider'))).message).toMatch(/features.readReceipts is true but markRead\(\) is missing/);
  });

  it('markRead() that throws or succeeds while the upstream is down: the markRead check fails', async () => {
    const withReads = (markRead: Provider['markRead']) => broken((p) => ({ features: { ...p.features, readReceipts: true }, markRead }));
    const thrower = withReads(() => Promise.reject(new Error('boom')));
    expect((await rejection(check(thrower, 'markRead()'))).message).toMatch(/markRead\(\) threw when the upstream accepts \(Error: boom\); it must never throw/);
    const liar = withReads(async () => ({ ok: true, channel: 'interactive', status: 200, providerId: undefined, raw: {}, attempts: 1 }));
    expect((await rejection(check(liar, 'markRead()'))).message).toMatch(/markRead\(\) reported success although the upstream did not answer/);
  });

  it('close() that rejects: the close check says so, and a setup that throws is named', async () => {
    const setup = broken(() => ({ close: () => Promise.reject(new Error('already closed')) }));
    expect((await rejection(check(setup, 'close()'))).message).toMatch(/close\(\) rejected when called the first time \(Error: already closed\)/);
    const failing: ProviderSetup = () => {
      throw new Error('no port');
    };
    expect((await rejection(check(failing, 'is a provider'))).message).toMatch(/the setup function threw: Error: no port/);
  });
});

describe('the conformance kit: declared limits and runners', () => {
  it('an upstream that cannot produce an outcome it did not declare: the check says to declare it', async () => {
    const setup: ProviderSetup = async () => {
      const made = await seedSetup();
      const answer = made.upstream.answer;
      return {
        ...made,
        upstream: {
          ...made.upstream,
          answer: (o) => {
            if (o === 'down') throw new Error('cannot drop connections');
            return answer(o);
          },
        },
      };
    };
    const err = await rejection(check(setup, 'send() to an upstream that does not answer'));
    expect(err.message).toMatch(/upstream.answer\("down"\) threw \(Error: cannot drop connections\); if the fake cannot produce it, declare it: \{ unsupported: \{ 'down': 'why' \} \}/);
    expect(check(setup, 'send() to an upstream that does not answer', { unsupported: { down: 'cannot drop connections' } }).skip).toBe('cannot drop connections');
  });

  it('skips, with the reason, what the setup declares unsupported, and refuses a reasonless or unknown declaration', () => {
    const checks = providerContract(seedSetup, { unsupported: { down: 'the fake cannot drop connections', sms: 'no SMS here' } });
    expect(checks.filter((c) => c.skip !== undefined).map((c) => [c.name, c.skip])).toEqual([
      ['send() to an upstream that does not answer resolves, failing as retryable', 'the fake cannot drop connections'],
      ['send() delivers an SMS when features.sms', 'no SMS here'],
    ]);
    expect(() => providerContract(seedSetup, { unsupported: { down: ' ' } })).toThrow(ConfigError);
    expect(() => providerContract(seedSetup, { unsupported: { accept: 'no' } as never })).toThrow(/unsupported.accept: is not something a provider may leave out/);
  });

  it('describeProvider registers one test per check with any runner: skipped ones with their reason, features it lacks skipped at run time', async () => {
    const tests: { name: string; body?: (context?: unknown) => Promise<void>; skipped: boolean }[] = [];
    let suite = '';
    const runner: TestRunner = {
      describe: (name, body) => {
        suite = name;
        body();
      },
      it: Object.assign((name: string, body: (context?: unknown) => Promise<void>) => void tests.push({ name, body, skipped: false }), {
        skip: (name: string) => void tests.push({ name, skipped: true }),
      }),
    };
    describeProvider('seed', seedSetup, { runner, unsupported: { transient: 'the fake has no 5xx' } });
    expect(suite).toBe('seed: the provider contract');
    expect(tests).toHaveLength(providerContract(seedSetup).length);
    expect(tests.filter((t) => t.skipped).map((t) => t.name)).toEqual(['send() meeting one server error then acceptance delivers once, or fails as retryable (unsupported: the fake has no 5xx)']);
    const notes: string[] = [];
    const text = tests.find((t) => t.name.startsWith('request() builds text'))!;
    await text.body!({ skip: (note: string) => void notes.push(note) });
    expect(notes).toEqual(['features.text is false: the runtime sends text by SMS and never asks request() for it']);
  });

  it('describeProvider without a runner and without globals says how to pass one', () => {
    expect(() => describeProvider('seed', seedSetup)).toThrow(/pass \{ runner: \{ describe, it \} \}/);
  });
});

/** A copy of a failed result with some fields changed (an accepted one as it is). */
function relabel(r: SendResult, change: Partial<Record<string, unknown>> | ((r: Extract<SendResult, { ok: false }>) => Partial<Record<string, unknown>>)): SendResult {
  if (r.ok) return r;
  return { ...r, ...(typeof change === 'function' ? change(r) : change) } as SendResult;
}
