/** `colloquy send` and `colloquy sms` against a provider that listens on loopback. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { tempDir } from '../support/temp.js';
import { run } from './cli.js';

const tmp = tempDir();
let sb: RunningSandbox;
let env: Record<string, string>;
beforeAll(async () => {
  sb = await startSandbox({ port: 0 });
  env = {
    COLLOQUY_BASE_URL: sb.url,
    COLLOQUY_AUTH_URL: sb.url,
    COLLOQUY_CLIENT_ID: SANDBOX_CLIENT_ID,
    COLLOQUY_CLIENT_SECRET: SANDBOX_CLIENT_SECRET,
    COLLOQUY_SENDER: '5215500000000',
    COLLOQUY_SMS_COUNTRY: 'mx',
  };
});
afterAll(async () => {
  await sb.close();
  tmp.remove();
});

const file = (name: string, json: unknown) => {
  const p = join(tmp.dir, name);
  writeFileSync(p, JSON.stringify(json));
  return p;
};

const list = {
  type: 'contacts',
  listMessages: { headerText: 'Menu', body: 'Pick one', footer: 'f', buttonText: 'Open', sections: [{ title: 'S', messages: [{ id: '1', title: 'One', description: 'd' }] }] },
};

describe('colloquy send', () => {
  it('sends a seed-shaped message with the token grant and paths of the provider, and prints the provider id', async () => {
    sb.sandbox.reset();
    const r = await run(['send', '--to', '5215512345678', file('list.json', list)], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^accepted \(interactive, HTTP 200, 1 attempt\)\nprovider id: wamid\./);
    const reqs = sb.sandbox.requests;
    expect(reqs.map((q) => [q.endpoint, q.path, q.status])).toEqual([
      ['token', '/token', 200],
      ['messaging', '/messaging-bsp-api-endpoint-ws/services/v1/messaging', 200],
    ]);
    expect(reqs[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(reqs[1]!.body).toEqual({ from: '5215500000000', to: '5215512345678', ...list });
    expect(reqs[1]!.headers['authorization']).toBe('Bearer <redacted>');
  });

  it('a bad message file prints every issue and sends nothing', async () => {
    sb.sandbox.reset();
    const bad = { type: 'interactive', listMessages: { body: '', buttonText: 'A label that is too long', sections: [] } };
    const r = await run(['send', '--to', '5215512345678', file('bad.json', bad)], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('nothing was sent');
    expect(r.stderr).toContain('listMessages.body: must not be empty');
    expect(r.stderr).toContain('listMessages.buttonText: must be at most 20 characters');
    expect(r.stderr).toContain('type: must be "contacts" for listMessages');
    expect(sb.sandbox.requests).toEqual([]);
  });

  it('a failed send exits non-zero with the status and the provider code', async () => {
    sb.sandbox.reset();
    sb.sandbox.faults.refuseInteractive('5215512340000');
    const r = await run(['send', '--to', '5215512340000', file('list2.json', list)], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('failed (interactive, permanent, HTTP 400, provider code 131047)');
  });

  it('not JSON, or no such file, is a clear error', async () => {
    const p = join(tmp.dir, 'broken.json');
    writeFileSync(p, '{ nope');
    expect((await run(['send', '--to', '5215512345678', p], env)).stderr).toMatch(/broken\.json: not valid JSON/);
    expect((await run(['send', '--to', '5215512345678', join(tmp.dir, 'missing.json')], env)).stderr).toMatch(/missing\.json: no such file/);
  });
});

describe('colloquy sms', () => {
  it('prints code, mailingId and result, and sends the provider body', async () => {
    sb.sandbox.reset();
    const r = await run(['sms', '--to', '5215512345678', 'Your', 'table', 'is', 'ready'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/code: 0\nmailingId: \d+\nresult: Applied/);
    expect(sb.sandbox.requests[1]!.body).toEqual({ msisdns: ['5215512345678'], message: 'Your table is ready', tag: 'colloquy-cli', country: 'MX' });
  });

  it('a provider error code with HTTP 200 is a failure carrying the code and hint', async () => {
    sb.sandbox.reset();
    sb.sandbox.faults.smsError(15, { times: 1 });
    const r = await run(['sms', '--to', '5215512345678', '--json', 'hello'], env);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, channel: 'sms', kind: 'permanent', status: 200, providerCode: 15 });
  });

  it('with no provider configured, it uses an in-process sandbox and says so', async () => {
    const r = await run(['sms', '--to', '5215512345678', 'hi'], {});
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('No COLLOQUY_BASE_URL set');
    expect(r.stdout).toContain('result: Applied');
  });
});
