/** `colloquy send --to N <message.json>` and `colloquy sms --to N <text>`: one send, for trying credentials. */
import { readFileSync } from 'node:fs';
import { loadConfig } from '../config.js';
import { ColloquyError, MessageValidationError, formatIssues } from '../errors.js';
import { fromSeedJson, toInteractiveRequest, toSmsRequest } from '../messages/request.js';
import type { Outbound, SendResult } from '../transport/types.js';
import { createLogger } from './logger.js';
import { openProvider } from './provider.js';
import type { Io } from './io.js';

/** Sends the message in a JSON file (`{type, listMessages | replyButtons | flow}` or a whole envelope). */
export async function sendCommand(file: string | undefined, to: string | undefined, io: Io): Promise<number> {
  if (!file) throw new ColloquyError('usage', 'usage: colloquy send --to <number> <message.json>');
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ColloquyError('bad_file', `${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `not valid JSON (${(err as Error).message})`}`);
  }
  let parsed;
  try {
    parsed = fromSeedJson(json);
  } catch (err) {
    if (err instanceof MessageValidationError) {
      io.err(`${file} is not a valid message; nothing was sent:\n${formatIssues(err.issues)}\n`);
      return 1;
    }
    throw err;
  }
  const recipient = to ?? parsed.to;
  if (!recipient) throw new ColloquyError('usage', 'say who to send to: --to <number> (digits only)');
  return withProvider(io, (sender) => ({ channel: 'interactive', request: toInteractiveRequest(parsed.message, { from: parsed.from ?? sender, to: recipient, flowToken: 'colloquy-cli' }) }));
}

/** Sends one SMS. */
export async function smsCommand(text: string | undefined, to: string | undefined, io: Io): Promise<number> {
  if (!to || !text) throw new ColloquyError('usage', 'usage: colloquy sms --to <number> <text>');
  const config = loadConfig(io.env);
  return withProvider(io, () => ({ channel: 'sms', request: toSmsRequest(text, { to, tag: 'colloquy-cli', ...config.sms }) }));
}

async function withProvider(io: Io, build: (sender: string) => Outbound): Promise<number> {
  const config = loadConfig(io.env);
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const provider = await openProvider(config, logger);
  try {
    if (provider.sandbox) io.err(`No COLLOQUY_BASE_URL set: sending to an in-process sandbox provider (${provider.sandbox.url}).\n`);
    let outbound: Outbound;
    try {
      outbound = build(provider.sender);
    } catch (err) {
      if (err instanceof MessageValidationError) {
        io.err(`Invalid message; nothing was sent:\n${formatIssues(err.issues)}\n`);
        return 1;
      }
      throw err;
    }
    const result = await provider.adapter.send(outbound);
    io.out(describe(result, io.json));
    return result.ok ? 0 : 1;
  } finally {
    await provider.close();
  }
}

function describe(r: SendResult, json: boolean): string {
  if (json)
    return `${JSON.stringify(r.ok ? { ok: true, channel: r.channel, status: r.status, providerId: r.providerId, ...(r.sms && { code: r.sms.code, mailingId: r.sms.mailingId, result: r.sms.result }) } : { ok: false, channel: r.channel, kind: r.kind, status: r.status, providerCode: r.providerCode, reason: r.reason, hint: r.hint })}\n`;
  if (r.ok) {
    const lines = [`accepted (${r.channel}, HTTP ${r.status}, ${r.attempts} attempt${r.attempts === 1 ? '' : 's'})`, `provider id: ${r.providerId ?? '(none in the answer)'}`];
    if (r.sms) lines.push(`code: ${r.sms.code}`, `mailingId: ${r.sms.mailingId}`, `result: ${r.sms.result}`);
    return `${lines.join('\n')}\n`;
  }
  const lines = [
    `failed (${r.channel}, ${r.kind}${r.status !== undefined ? `, HTTP ${r.status}` : ''}${r.providerCode !== undefined ? `, provider code ${r.providerCode}` : ''})`,
    `reason: ${r.reason}`,
  ];
  if (r.hint) lines.push(`hint: ${r.hint}`);
  return `${lines.join('\n')}\n`;
}
