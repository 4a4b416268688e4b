/** The Cloud API mode's settings, checked once when the sandbox is created. */
import { ConfigError } from '../../errors.js';
import { SANDBOX_CLOUD_API_TOKEN, SANDBOX_WINDOW_MS } from '../constants.js';
import { SANDBOX_TEMPLATES } from './templates.js';
import type { CloudApiOptions, CloudApiSettings, SandboxNumber, SandboxTemplate } from './types.js';

const DIGITS = /^[0-9]{1,20}$/;
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** The settings, with defaults: one number (the sandbox's own), the default templates, 24 hours. */
export function cloudSettings(options: CloudApiOptions | undefined, fallback: SandboxNumber): CloudApiSettings {
  const o = options ?? {};
  const token = checkToken('cloudApi.token', o.token ?? SANDBOX_CLOUD_API_TOKEN);
  const numbers = checkNumbers(o.numbers ?? [fallback]);
  const templates = checkTemplates(o.templates ?? SANDBOX_TEMPLATES);
  const windowMs = o.windowMs ?? SANDBOX_WINDOW_MS;
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new ConfigError('cloudApi.windowMs', `must be a positive number of milliseconds (got ${windowMs})`);
  const windowErrors = o.windowErrors ?? 'sync';
  if (windowErrors !== 'sync' && windowErrors !== 'status') throw new ConfigError('cloudApi.windowErrors', `must be "sync" or "status" (got ${String(windowErrors)})`);
  return { token, numbers, templates, windowMs, windowErrors, statuses: o.statuses ?? true };
}

function checkToken(name: string, token: string): string {
  if (!TOKEN.test(token)) throw new ConfigError(name, 'must be a bearer token: letters, digits and -._~+/ (then any "=")');
  return token;
}

function checkNumbers(numbers: readonly SandboxNumber[]): SandboxNumber[] {
  if (numbers.length === 0) throw new ConfigError('cloudApi.numbers', 'must name at least one number');
  const ids = new Set<string>();
  const displays = new Set<string>();
  return numbers.map((n, i) => {
    const name = `cloudApi.numbers[${i}]`;
    if (!DIGITS.test(n.phoneNumberId)) throw new ConfigError(`${name}.phoneNumberId`, `must be digits (got "${n.phoneNumberId}")`);
    if (!DIGITS.test(n.displayNumber)) throw new ConfigError(`${name}.displayNumber`, `must be digits (got "${n.displayNumber}")`);
    if (ids.has(n.phoneNumberId)) throw new ConfigError(`${name}.phoneNumberId`, `"${n.phoneNumberId}" is given twice`);
    if (displays.has(n.displayNumber)) throw new ConfigError(`${name}.displayNumber`, `"${n.displayNumber}" is given twice`);
    ids.add(n.phoneNumberId);
    displays.add(n.displayNumber);
    const token = n.token === undefined ? undefined : checkToken(`${name}.token`, n.token);
    return { phoneNumberId: n.phoneNumberId, displayNumber: n.displayNumber, ...(token !== undefined && { token }) };
  });
}

function checkTemplates(templates: readonly SandboxTemplate[]): SandboxTemplate[] {
  const seen = new Set<string>();
  for (const [i, t] of templates.entries()) {
    const name = `cloudApi.templates[${i}]`;
    if (!/^[a-z0-9_]{1,512}$/.test(t.name)) throw new ConfigError(`${name}.name`, `must be lower-case letters, digits and "_" (got "${t.name}")`);
    if (!/^[a-z]{2,3}(_[A-Z]{2})?$/.test(t.language)) throw new ConfigError(`${name}.language`, `must be a language code such as "en" or "en_US" (got "${t.language}")`);
    if (seen.has(`${t.name}/${t.language}`)) throw new ConfigError(name, `${t.name} in ${t.language} is given twice`);
    if ((t.quickReplies?.length ?? 0) > 10) throw new ConfigError(`${name}.quickReplies`, 'a template has at most 10 quick-reply buttons');
    seen.add(`${t.name}/${t.language}`);
  }
  return [...templates];
}
