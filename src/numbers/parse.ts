/**
 * The numbers file (COLLOQUY_NUMBERS_FILE), read and validated at start: every problem of the file
 * in one error, each naming the field (`numbers[1].sendRate`), none quoting a value (tokens and app
 * secrets live in the file or in the variables it names).
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError, formatIssues, type Issue } from '../errors.js';
import { DEFAULT_NUMBER_SEND_RATE, type NumberConfig, type NumbersConfig } from './types.js';
import { NUMBER_FIELDS, numberEntrySchema, type NumberEntry } from './schema.js';

/** The variable that names the numbers file; the `variable` of its errors. */
export const NUMBERS_FILE_VARIABLE = 'COLLOQUY_NUMBERS_FILE';

/** The environment: the variables `tokenEnv` and `appSecretEnv` name are read from it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** A numbers file that cannot be used: its path and every problem in it (paths into the file). */
export class NumbersFileError extends ConfigError {
  override name = 'NumbersFileError';
  /** The file at fault. */
  readonly file: string;
  /** Every problem, with its path (`["numbers", 1, "sendRate"]`); empty when the file could not be read or parsed. */
  readonly issues: readonly Issue[];
  constructor(file: string, message: string, issues: readonly Issue[] = []) {
    super(NUMBERS_FILE_VARIABLE, message);
    this.file = file;
    this.issues = issues;
  }
}

/**
 * Reads and validates the numbers file at `path`. Throws {@link NumbersFileError} (a ConfigError)
 * naming the path when the file cannot be read, is not JSON, or has problems (all of them listed).
 *
 * @example
 * const numbers = loadNumbersFile(process.env.COLLOQUY_NUMBERS_FILE, process.env);
 */
export function loadNumbersFile(path: string, env: Env): NumbersConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new NumbersFileError(path, `cannot read the numbers file ${path}: ${readProblem(err)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
  } catch (err) {
    throw new NumbersFileError(path, `the numbers file ${path} is not valid JSON: ${jsonProblem(err)}`);
  }
  return parseNumbers(json, { file: path, env });
}

/** What {@link parseNumbers} needs besides the JSON. */
export interface ParseNumbersOptions {
  /** The file the JSON came from, for messages. */
  readonly file: string;
  /** Where `tokenEnv` and `appSecretEnv` are looked up. */
  readonly env: Env;
}

/**
 * Validates the parsed content of a numbers file and resolves it: secrets read from `env`,
 * defaults filled in, display numbers as digits. Throws {@link NumbersFileError} listing every
 * problem. Pure: it reads nothing but its arguments.
 */
export function parseNumbers(json: unknown, { file, env }: ParseNumbersOptions): NumbersConfig {
  const list = rootNumbers(json, file);
  const schema = numberEntrySchema(env);
  const issues: Issue[] = [];
  const numbers: NumberConfig[] = [];
  list.forEach((raw, i) => {
    const at = ['numbers', i];
    issues.push(...exclusive(raw, at));
    const parsed = schema.safeParse(raw);
    if (!parsed.success) issues.push(...zodIssues(parsed.error, at));
    else numbers.push(resolve(parsed.data, i, env));
  });
  issues.push(...duplicates(list, 'phoneNumberId', (v) => v), ...duplicates(list, 'displayNumber', digitsOf));
  if (issues.length > 0) throw problems(file, issues);
  return { file, numbers };
}

/**
 * Checks that every number's `bot` is a bot the deployment serves. Throws {@link NumbersFileError}
 * naming each unknown bot and the served ones.
 */
export function checkNumberBots(config: NumbersConfig, servedBotIds: readonly string[]): void {
  const served = new Set(servedBotIds);
  const list = [...served].sort().join(', ') || 'none';
  const issues: Issue[] = [];
  config.numbers.forEach((n, i) => {
    if (!served.has(n.bot)) issues.push({ path: ['numbers', i, 'bot'], message: `no served bot is "${n.bot}" (served: ${list})` });
  });
  if (issues.length > 0) throw problems(config.file, issues);
}

function rootNumbers(json: unknown, file: string): readonly unknown[] {
  const root = typeof json === 'object' && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  if (root === undefined) throw problems(file, [{ path: [], message: 'must be a JSON object: { "numbers": [ … ] }' }]);
  const issues: Issue[] = Object.keys(root)
    .filter((k) => k !== 'numbers')
    .map((k) => ({ path: [k], message: 'is not a known field (the file holds only "numbers")' }));
  const list = root['numbers'];
  if (!Array.isArray(list)) issues.unshift({ path: ['numbers'], message: list === undefined ? 'is required: a list of numbers' : 'must be a list of numbers' });
  else if (list.length === 0) issues.unshift({ path: ['numbers'], message: 'must list at least one number' });
  if (issues.length > 0) throw problems(file, issues);
  return list as unknown[];
}

/** `token` and `tokenEnv` (and `appSecret` and `appSecretEnv`) are alternatives. */
function exclusive(raw: unknown, at: (string | number)[]): Issue[] {
  if (typeof raw !== 'object' || raw === null) return [];
  const has = (k: string) => Object.hasOwn(raw, k);
  const out: Issue[] = [];
  if (has('token') && has('tokenEnv')) out.push({ path: [...at, 'token'], message: 'give token or tokenEnv, not both' });
  if (has('appSecret') && has('appSecretEnv')) out.push({ path: [...at, 'appSecret'], message: 'give appSecret or appSecretEnv, not both' });
  return out;
}

function zodIssues(error: z.ZodError, at: (string | number)[]): Issue[] {
  const out: Issue[] = [];
  for (const i of error.issues) {
    const path = [...at, ...i.path.filter((p): p is string | number => typeof p !== 'symbol')];
    if (i.code === 'unrecognized_keys') {
      for (const key of i.keys) out.push({ path: [...path, key], message: `is not a known field (known: ${NUMBER_FIELDS.join(', ')})` });
    } else if (i.code === 'invalid_type' && i.expected === 'object') out.push({ path, message: 'must be an object: { "phoneNumberId": …, "displayNumber": …, "bot": … }' });
    else out.push({ path, message: i.message });
  }
  return out;
}

/** Two entries with the same value of `field` (compared by `key`): the later ones are errors. */
function duplicates(list: readonly unknown[], field: 'phoneNumberId' | 'displayNumber', key: (v: string) => string): Issue[] {
  const first = new Map<string, number>();
  const out: Issue[] = [];
  list.forEach((raw, i) => {
    const value = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)[field] : undefined;
    if (typeof value !== 'string' || key(value) === '') return;
    const seen = first.get(key(value));
    if (seen === undefined) first.set(key(value), i);
    else out.push({ path: ['numbers', i, field], message: `${key(value)} is already numbers[${seen}].${field}: each number may appear once` });
  });
  return out;
}

function resolve(e: NumberEntry, i: number, env: Env): NumberConfig {
  const token = e.token ?? (e.tokenEnv === undefined ? undefined : env[e.tokenEnv]);
  const appSecret = e.appSecret ?? (e.appSecretEnv === undefined ? undefined : env[e.appSecretEnv]);
  return {
    phoneNumberId: e.phoneNumberId,
    displayNumber: digitsOf(e.displayNumber),
    bot: e.bot,
    provider: e.provider,
    token,
    tokenName: e.tokenEnv !== undefined ? `numbers[${i}].tokenEnv (${e.tokenEnv})` : e.token !== undefined ? `numbers[${i}].token` : 'COLLOQUY_CLOUD_API_TOKEN',
    appSecret,
    sendRate: e.sendRate ?? DEFAULT_NUMBER_SEND_RATE,
    userPaceMs: e.userPaceMs ?? 0,
    flowKey: e.flowPrivateKey === undefined ? undefined : flowKeyOf(e.flowPrivateKey, e.flowPassphraseEnv, i, env),
  };
}

/** A number's Flow key file and passphrase; the key itself is read at start (config.ts), its errors naming these fields. */
function flowKeyOf(path: string, passphraseEnv: string | undefined, i: number, env: Env): NonNullable<NumberConfig['flowKey']> {
  return {
    path,
    passphrase: passphraseEnv === undefined ? undefined : env[passphraseEnv],
    names: { key: `numbers[${i}].flowPrivateKey`, passphrase: passphraseEnv === undefined ? `numbers[${i}].flowPassphraseEnv` : `numbers[${i}].flowPassphraseEnv (${passphraseEnv})` },
  };
}

function problems(file: string, issues: readonly Issue[]): NumbersFileError {
  const n = issues.length;
  return new NumbersFileError(file, `the numbers file ${file} has ${n} problem${n === 1 ? '' : 's'}:\n${formatIssues(issues)}`, issues);
}

function digitsOf(n: string): string {
  return n.replace(/[^0-9]/g, '');
}

function readProblem(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return typeof code === 'string' ? code : 'unknown error';
}

/**
 * What is wrong with the JSON, without the excerpt of the text that newer engines quote (the
 * text may hold a secret): the engine's description and, when it gives one, the position.
 */
function jsonProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  const where = /at position ([0-9]+)(?: \(line ([0-9]+) column ([0-9]+)\))?/.exec(message);
  let what = message.split(/, "| in JSON| is not valid JSON| at position/)[0] ?? '';
  if (what.startsWith('Unexpected token')) what = 'unexpected character';
  if (what === '' || what.includes('"')) what = 'syntax error';
  const at = where === null ? '' : where[2] !== undefined ? ` at line ${where[2]}, column ${where[3]}` : ` at position ${where[1]}`;
  return `${what.charAt(0).toLowerCase()}${what.slice(1)}${at}`;
}
