/** The numbers file: read, validated (every problem at once, no secret quoted), resolved. */
import { writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { checkNumberBots, loadNumbersFile, NumbersFileError, parseNumbers } from '../../src/numbers/index.js';
import { tempDir } from '../support/temp.js';

const FILE = '/etc/colloquy/numbers.json';
const TOKEN_A = 'EAAG-token-of-acme-0123456789';
const SECRET_A = 'app-secret-of-acme-abcdef';
const SECRET_B = 'inline-app-secret-of-beta-98765';
const TOKEN_B = 'EAAG-inline-token-of-beta-xyz';
const ENV = { ACME_WA_TOKEN: TOKEN_A, ACME_APP_SECRET: SECRET_A, EMPTY_ONE: '' };

const acme = { phoneNumberId: '106540352242922', displayNumber: '+1 555 000 1111', bot: 'pizza', tokenEnv: 'ACME_WA_TOKEN', appSecretEnv: 'ACME_APP_SECRET' };
const beta = { phoneNumberId: '106540352242933', displayNumber: '+1 (555) 000-2222', bot: 'order', provider: 'seed', token: TOKEN_B, appSecret: SECRET_B, sendRate: 1000, userPaceMs: 6000 };

/** Parses, expecting a NumbersFileError; returns it. */
function refused(json: unknown, env: Record<string, string | undefined> = ENV): NumbersFileError {
  try {
    parseNumbers(json, { file: FILE, env });
  } catch (err) {
    expect(err).toBeInstanceOf(NumbersFileError);
    expect(err).toBeInstanceOf(ConfigError);
    const e = err as NumbersFileError;
    for (const secret of [TOKEN_A, SECRET_A, TOKEN_B, SECRET_B]) expect(e.message).not.toContain(secret);
    expect(e.message).toContain(FILE);
    expect(e.message).not.toMatch(/\n\s+at /); // no stack trace in the message
    return e;
  }
  throw new Error('expected the numbers file to be refused');
}

const lines = (e: NumbersFileError) =>
  e.issues.map(
    (i) =>
      `${i.path
        .map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`))
        .join('')
        .slice(1)}: ${i.message}`,
  );

describe('parseNumbers', () => {
  it('resolves a valid file: env and inline secrets, defaults, digits-only display numbers', () => {
    const config = parseNumbers({ numbers: [acme, beta] }, { file: FILE, env: ENV });
    expect(config).toEqual({
      file: FILE,
      numbers: [
        {
          phoneNumberId: '106540352242922',
          displayNumber: '15550001111',
          bot: 'pizza',
          provider: 'cloud-api',
          token: TOKEN_A,
          tokenName: 'numbers[0].tokenEnv (ACME_WA_TOKEN)',
          appSecret: SECRET_A,
          sendRate: 80,
          userPaceMs: 0,
        },
        {
          phoneNumberId: '106540352242933',
          displayNumber: '15550002222',
          bot: 'order',
          provider: 'seed',
          token: TOKEN_B,
          tokenName: 'numbers[1].token',
          appSecret: SECRET_B,
          sendRate: 1000,
          userPaceMs: 6000,
        },
      ],
    });
  });

  it('leaves token and app secret to the defaults when a number names neither', () => {
    const [n] = parseNumbers({ numbers: [{ phoneNumberId: '1', displayNumber: '15550001111', bot: 'pizza' }] }, { file: FILE, env: {} }).numbers;
    expect(n).toMatchObject({ token: undefined, tokenName: 'COLLOQUY_CLOUD_API_TOKEN', appSecret: undefined, provider: 'cloud-api', sendRate: 80 });
  });

  it('names a tokenEnv or appSecretEnv whose variable is unset or empty', () => {
    const e = refused({ numbers: [{ ...acme, tokenEnv: 'NOPE_TOKEN', appSecretEnv: 'EMPTY_ONE' }] });
    expect(lines(e)).toEqual(['numbers[0].tokenEnv: names the environment variable NOPE_TOKEN, which is not set', 'numbers[0].appSecretEnv: names the environment variable EMPTY_ONE, which is empty']);
    expect(e.message).toContain('NOPE_TOKEN');
  });

  it('reports every problem of every entry together, each with its field', () => {
    const e = refused({
      numbers: [
        { ...acme, sendRate: 1001, userPaceMs: -1 },
        { phoneNumberId: 106540352242922, displayNumber: 'call us', bot: 'no such bot!', provider: 'twilio', token: 42, appSecret: '' },
        { ...beta, sendRate: 2.5, tokn: TOKEN_B },
        'not an object',
      ],
    });
    expect(lines(e)).toEqual([
      'numbers[0].sendRate: must be a whole number from 1 to 1000 (messages per second)',
      'numbers[0].userPaceMs: must be a whole number from 0 to 3600000 (milliseconds)',
      "numbers[1].phoneNumberId: must be the Cloud API's phone_number_id, digits in a string",
      'numbers[1].displayNumber: must be a phone number with its country code: digits, optionally "+", spaces, "-", "." or parentheses',
      'numbers[1].bot: must be a bot id: 1–64 letters, digits, "-" or "_"',
      'numbers[1].provider: must be "cloud-api" or "seed"',
      'numbers[1].token: must be the access token as a string',
      'numbers[1].appSecret: must not be empty (the app secret)',
      'numbers[2].sendRate: must be a whole number from 1 to 1000 (messages per second)',
      'numbers[2].tokn: is not a known field (known: phoneNumberId, displayNumber, bot, provider, token, tokenEnv, appSecret, appSecretEnv, sendRate, userPaceMs, flowPrivateKey, flowPassphraseEnv)',
      'numbers[3]: must be an object: { "phoneNumberId": …, "displayNumber": …, "bot": … }',
    ]);
    expect(e.message).toContain(`the numbers file ${FILE} has 11 problems:\n  - numbers[0].sendRate: must be a whole number from 1 to 1000`);
  });

  it('names missing fields, and token given twice', () => {
    const e = refused({ numbers: [{ token: TOKEN_B, tokenEnv: 'ACME_WA_TOKEN', appSecret: SECRET_B, appSecretEnv: 'ACME_APP_SECRET' }] });
    expect(lines(e)).toEqual([
      'numbers[0].token: give token or tokenEnv, not both',
      'numbers[0].appSecret: give appSecret or appSecretEnv, not both',
      "numbers[0].phoneNumberId: is required: must be the Cloud API's phone_number_id, digits in a string",
      'numbers[0].displayNumber: is required: must be the phone number users write to, with its country code',
      'numbers[0].bot: is required: must be the id of a bot this deployment serves',
    ]);
  });

  it('refuses the same phoneNumberId or display number twice (display numbers compared as digits)', () => {
    const e = refused({ numbers: [acme, { ...beta, phoneNumberId: acme.phoneNumberId }, { ...beta, phoneNumberId: '7', displayNumber: '15550001111' }] });
    expect(lines(e)).toEqual([
      'numbers[1].phoneNumberId: 106540352242922 is already numbers[0].phoneNumberId: each number may appear once',
      'numbers[2].displayNumber: 15550001111 is already numbers[0].displayNumber: each number may appear once',
    ]);
  });

  it('refuses a file that is not an object of numbers', () => {
    expect(lines(refused([acme]))).toEqual([': must be a JSON object: { "numbers": [ … ] }']);
    expect(lines(refused({}))).toEqual(['numbers: is required: a list of numbers']);
    expect(lines(refused({ numbers: [], extra: 1 }))).toEqual(['numbers: must list at least one number', 'extra: is not a known field (the file holds only "numbers")']);
    expect(lines(refused({ numbers: { acme } }))).toEqual(['numbers: must be a list of numbers']);
  });

  it('is a ConfigError on COLLOQUY_NUMBERS_FILE', () => {
    const e = refused({ numbers: [{ ...acme, sendRate: 0 }] });
    expect(e.variable).toBe('COLLOQUY_NUMBERS_FILE');
    expect(e.message).toBe(`COLLOQUY_NUMBERS_FILE: the numbers file ${FILE} has 1 problem:\n  - numbers[0].sendRate: must be a whole number from 1 to 1000 (messages per second)`);
  });
});

describe('loadNumbersFile', () => {
  const dir = tempDir('colloquy-numbers-');
  afterAll(() => dir.remove());

  it('reads a file (a byte-order mark is fine)', () => {
    const path = dir.path('numbers.json');
    writeFileSync(path, `\uFEFF${JSON.stringify({ numbers: [acme] }, null, 2)}`);
    const config = loadNumbersFile(path, ENV);
    expect(config.file).toBe(path);
    expect(config.numbers.map((n) => n.displayNumber)).toEqual(['15550001111']);
  });

  it('names the path of a file that cannot be read', () => {
    const missing = dir.path('missing.json');
    expect(() => loadNumbersFile(missing, ENV)).toThrow(`COLLOQUY_NUMBERS_FILE: cannot read the numbers file ${missing}: no such file`);
    expect(() => loadNumbersFile(dir.dir, ENV)).toThrow('it is a directory');
  });

  it('names the path of a file that is not JSON, without quoting it (a secret may be near)', () => {
    const path = dir.path('bad.json');
    const text = `{ "numbers": [ { "token": "${TOKEN_B}" ,, } ] }`;
    writeFileSync(path, text);
    let message = '';
    try {
      loadNumbersFile(path, ENV);
    } catch (err) {
      expect(err).toBeInstanceOf(NumbersFileError);
      message = (err as Error).message;
    }
    expect(message).toMatch(new RegExp(`^COLLOQUY_NUMBERS_FILE: the numbers file ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON: `));
    expect(message).not.toContain(TOKEN_B);
    expect(message).not.toContain('numbers"');
    writeFileSync(path, '{"numbers": [');
    expect(() => loadNumbersFile(path, ENV)).toThrow(/is not valid JSON: unexpected end of JSON input/i);
  });

  it('validates what it read like parseNumbers', () => {
    const path = dir.path('invalid.json');
    writeFileSync(path, JSON.stringify({ numbers: [{ ...acme, tokenEnv: 'UNSET_TOKEN' }] }));
    expect(() => loadNumbersFile(path, ENV)).toThrow(`the numbers file ${path} has 1 problem:\n  - numbers[0].tokenEnv: names the environment variable UNSET_TOKEN, which is not set`);
  });
});

describe('checkNumberBots', () => {
  const config = parseNumbers({ numbers: [acme, beta] }, { file: FILE, env: ENV });

  it('accepts numbers whose bots are served', () => {
    expect(() => checkNumberBots(config, ['order', 'pizza', 'other'])).not.toThrow();
  });

  it('names every unknown bot and the served ones', () => {
    expect(() => checkNumberBots(config, ['pizza', 'support'])).toThrow(`the numbers file ${FILE} has 1 problem:\n  - numbers[1].bot: no served bot is "order" (served: pizza, support)`);
    expect(() => checkNumberBots(config, [])).toThrow(/numbers\[0\]\.bot: no served bot is "pizza" \(served: none\)\n.*numbers\[1\]\.bot/);
  });
});
