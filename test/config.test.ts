import { describe, expect, it } from 'vitest';
import { configRefusal } from './support/config.js';
import { ConfigError } from '../src/index.js';
import { loadConfig } from '../src/entries/server.js';

const real = {
  COLLOQUY_BASE_URL: 'https://api.example.com/',
  COLLOQUY_AUTH_URL: 'https://auth.example.com',
  COLLOQUY_CLIENT_ID: 'id',
  COLLOQUY_CLIENT_SECRET: 's3cret',
  COLLOQUY_SENDER: '5215500000000',
};

const fails = configRefusal;

describe('loadConfig', () => {
  it('defaults to the sandbox on 127.0.0.1:3000 with ./data/colloquy.db', () => {
    expect(loadConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      db: './data/colloquy.db',
      provider: { kind: 'sandbox', api: 'seed' },
      sender: undefined,
      webhookSecret: undefined,
      verifyToken: undefined,
      sms: {},
      logLevel: 'info',
      maxBodyBytes: 1_048_576,
      sendRate: undefined,
      sqliteSynchronous: 'full',
      sandboxPublic: false,
      sendLeaseMs: undefined,
      sendHeartbeatMs: undefined,
      laneLeaseMs: undefined,
      laneHeartbeatMs: undefined,
      pollMs: undefined,
      handoffClaimIdleMs: 1_800_000,
      cloudApi: { url: 'https://graph.facebook.com/v23.0', token: undefined, phoneNumberId: undefined },
      flows: { key: undefined, numberKeys: new Map(), secrets: [], budgetMs: 3000 },
      agentSessionHours: 12,
    });
  });

  it('reads a real provider, trimming a trailing slash, with every SMS field', () => {
    const c = loadConfig({ ...real, COLLOQUY_AUTH_METHOD: 'basic', COLLOQUY_SMS_COUNTRY: 'mx', COLLOQUY_SMS_DIAL: '41414', COLLOQUY_SMS_MASK: 'PIZZA', COLLOQUY_SEND_RATE: '80', PORT: '8080' });
    expect(c.provider).toEqual({ kind: 'real', baseUrl: 'https://api.example.com', authUrl: 'https://auth.example.com', clientId: 'id', clientSecret: 's3cret', authMethod: 'basic' });
    expect([c.sms, c.sendRate, c.port, c.sender]).toEqual([{ country: 'MX', dial: 41414, mask: 'PIZZA' }, 80, 8080, '5215500000000']);
  });

  it('reads the Cloud API: Meta by default, with the seed relay as its SMS channel when set, or the sandbox playing it', () => {
    expect(loadConfig({ COLLOQUY_PROVIDER: 'cloud-api' }).provider).toEqual({ kind: 'sandbox', api: 'cloud-api' });
    expect(loadConfig({ COLLOQUY_PROVIDER: 'cloud-api', COLLOQUY_CLOUD_API_TOKEN: 'EAAB' }).provider).toEqual({
      kind: 'cloud-api',
      url: 'https://graph.facebook.com/v23.0',
      token: 'EAAB',
      sms: undefined,
    });
    const both = loadConfig({ ...real, COLLOQUY_PROVIDER: 'cloud-api', COLLOQUY_CLOUD_API_URL: 'http://127.0.0.1:9/v21.0/', COLLOQUY_CLOUD_API_TOKEN: 'EAAB' }).provider;
    expect(both).toMatchObject({ kind: 'cloud-api', url: 'http://127.0.0.1:9/v21.0', sms: { baseUrl: 'https://api.example.com', clientId: 'id' } });
    expect(loadConfig({}).provider).toEqual({ kind: 'sandbox', api: 'seed' });
  });

  it.each([
    [{ PORT: '70000' }, 'PORT', 'must be a whole number from 0 to 65535, got "70000"'],
    [{ COLLOQUY_PROVIDER: 'meta' }, 'COLLOQUY_PROVIDER', 'must be one of seed, cloud-api, got "meta"'],
    [{ COLLOQUY_PROVIDER: 'cloud-api', COLLOQUY_CLOUD_API_URL: 'http://127.0.0.1:9/v23.0' }, 'COLLOQUY_CLOUD_API_TOKEN', 'is required when COLLOQUY_CLOUD_API_URL is set'],
    [{ COLLOQUY_NUMBERS_FILE: '/nonexistent/numbers.json' }, 'COLLOQUY_NUMBERS_FILE', ''],
    [{ COLLOQUY_BASE_URL: 'ftp://x' }, 'COLLOQUY_BASE_URL', 'must be an http or https URL'],
    [{ ...real, COLLOQUY_AUTH_URL: '' }, 'COLLOQUY_AUTH_URL', 'is required when COLLOQUY_BASE_URL is set'],
    [{ ...real, COLLOQUY_CLIENT_SECRET: ' ' }, 'COLLOQUY_CLIENT_SECRET', 'is required when COLLOQUY_BASE_URL is set'],
    [{ ...real, COLLOQUY_SENDER: '' }, 'COLLOQUY_SENDER', 'is required when COLLOQUY_BASE_URL is set'],
    [{ COLLOQUY_SENDER: '+5215500000000' }, 'COLLOQUY_SENDER', 'must be digits only'],
    [{ COLLOQUY_AUTH_METHOD: 'header' }, 'COLLOQUY_AUTH_METHOD', 'must be one of body, basic, got "header"'],
    [{ COLLOQUY_SMS_COUNTRY: 'MEX' }, 'COLLOQUY_SMS_COUNTRY', 'must be a two-letter ISO-3166 code'],
    [{ COLLOQUY_SMS_MASK: 'far too long a mask' }, 'COLLOQUY_SMS_MASK', 'must be 1–11 letters, digits or spaces'],
    [{ COLLOQUY_LOG_LEVEL: 'loud' }, 'COLLOQUY_LOG_LEVEL', 'must be one of fatal, error, warn, info, debug, trace, silent'],
    [{ COLLOQUY_SEND_RATE: '0' }, 'COLLOQUY_SEND_RATE', 'must be a whole number from 1 to 10000'],
  ])('%o is refused, naming %s', (env, variable, message) => {
    const err = fails(env);
    expect(err.variable).toBe(variable);
    expect(err.message).toContain(`${variable}: ${message}`);
  });

  it('never puts a secret in its message', () => {
    const err = fails({ ...real, COLLOQUY_CLIENT_SECRET: 'topsecret', COLLOQUY_SENDER: 'abc' });
    expect(err.message).not.toContain('topsecret');
  });

  it('takes the database from COLLOQUY_DATABASE_URL: a PostgreSQL URL or a SQLite path, over COLLOQUY_DB', () => {
    expect(loadConfig({ COLLOQUY_DATABASE_URL: 'postgres://app:pw@db.internal:5432/colloquy' }).db).toBe('postgres://app:pw@db.internal:5432/colloquy');
    expect(loadConfig({ COLLOQUY_DATABASE_URL: 'postgresql:///colloquy?host=/var/run/postgresql' }).db).toBe('postgresql:///colloquy?host=/var/run/postgresql');
    expect(loadConfig({ COLLOQUY_DATABASE_URL: ' data/other.db ', COLLOQUY_DB: 'ignored.db' }).db).toBe('data/other.db');
    expect(loadConfig({ COLLOQUY_DB: 'old.db' }).db).toBe('old.db');
    expect(loadConfig({ COLLOQUY_DATABASE_URL: ':memory:' }).db).toBe(':memory:');
  });

  it.each([
    ['mysql://app:hunter2@db/colloquy', 'must be a postgres:// or postgresql:// URL or a SQLite file path, got a mysql:// URL'],
    ['postgres://app:hunter2@db:notaport/colloquy', 'is not a valid URL'],
    ['postgres:///colloquy', 'names no host'],
  ])('refuses COLLOQUY_DATABASE_URL=%s naming the variable, never the password', (value, message) => {
    const err = fails({ COLLOQUY_DATABASE_URL: value });
    expect(err.variable).toBe('COLLOQUY_DATABASE_URL');
    expect(err.message).toContain(message);
    expect(err.message).not.toContain('hunter2');
  });
});

describe('lease variables', () => {
  it('reads COLLOQUY_LEASE_MS, COLLOQUY_HEARTBEAT_MS, COLLOQUY_POLL_MS and COLLOQUY_LANE_CONCURRENCY', () => {
    expect(loadConfig({ COLLOQUY_LEASE_MS: '6000', COLLOQUY_HEARTBEAT_MS: '1500', COLLOQUY_POLL_MS: '500' })).toMatchObject({ leaseMs: 6000, heartbeatMs: 1500, pollMs: 500 });
    expect(loadConfig({ COLLOQUY_LANE_CONCURRENCY: '32' })).toMatchObject({ laneConcurrency: 32 });
    for (const bad of ['0', '-4', 'many', '2.5']) expect(() => loadConfig({ COLLOQUY_LANE_CONCURRENCY: bad })).toThrow(/COLLOQUY_LANE_CONCURRENCY/);
  });

  it('stops on a heartbeat or poll not shorter than the lease, or a bad number, naming the variable', () => {
    expect(() => loadConfig({ COLLOQUY_LEASE_MS: '3000', COLLOQUY_HEARTBEAT_MS: '3000' })).toThrow(/COLLOQUY_HEARTBEAT_MS/);
    expect(() => loadConfig({ COLLOQUY_HEARTBEAT_MS: '20000' })).toThrow(/COLLOQUY_HEARTBEAT_MS/);
    expect(() => loadConfig({ COLLOQUY_POLL_MS: '10000' })).toThrow(/COLLOQUY_POLL_MS/);
    expect(() => loadConfig({ COLLOQUY_LEASE_MS: '500' })).toThrow(/COLLOQUY_LEASE_MS/);
    expect(() => loadConfig({ COLLOQUY_LEASE_MS: 'soon' })).toThrow(/COLLOQUY_LEASE_MS/);
    expect(() => loadConfig({ COLLOQUY_POLL_MS: 'often' })).toThrow(/COLLOQUY_POLL_MS/);
  });

  it('stops on a lease variable of an earlier version, naming it and its replacement', () => {
    for (const [old, now] of [
      ['COLLOQUY_SEND_LEASE_MS', 'COLLOQUY_LEASE_MS'],
      ['COLLOQUY_LANE_LEASE_MS', 'COLLOQUY_LEASE_MS'],
      ['COLLOQUY_SEND_HEARTBEAT_MS', 'COLLOQUY_HEARTBEAT_MS'],
      ['COLLOQUY_LANE_HEARTBEAT_MS', 'COLLOQUY_HEARTBEAT_MS'],
    ]) {
      expect(() => loadConfig({ [old!]: '8000' })).toThrow(ConfigError);
      expect(() => loadConfig({ [old!]: '8000' })).toThrow(new RegExp(`${old}.*replaced by ${now}`));
    }
  });
});
