/**
 * One-off sends with the send adapter alone: no runtime, no store, no webhook. A list message and
 * an SMS, each built, validated, turned into the provider's request body and sent; the result is
 * typed (`ok: true` with the provider's id, or `ok: false` with why).
 *
 *   node --conditions=colloquy-source --import tsx examples/send-once.ts
 */
import { list } from 'colloquy';
import { createHttpAdapter, loadConfig, type SendResult } from 'colloquy/server';
import { toInteractiveRequest, toSmsRequest } from 'colloquy/messages';
import { startSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER } from 'colloquy/sandbox';

// The real provider when COLLOQUY_BASE_URL (and friends) are set; otherwise a sandbox in-process.
const config = loadConfig();
const sandbox = config.provider.kind === 'sandbox' ? await startSandbox({ port: 0 }) : undefined;
const adapter = createHttpAdapter(
  config.provider.kind === 'real' ? config.provider : { baseUrl: sandbox!.url, authUrl: sandbox!.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET },
);
const from = config.sender ?? SANDBOX_SENDER;
const to = process.env['EXAMPLE_TO'] ?? '5215512345678'; // with a real provider, a number you own

function show(what: string, r: SendResult): void {
  if (r.ok) {
    // Interactive: the wamid. SMS: also the provider's business code, mailing id and result.
    console.log(`${what}: accepted (HTTP ${r.status}, attempts=${r.attempts}) id=${r.providerId}${r.sms ? ` sms=${JSON.stringify(r.sms)}` : ''}`);
  } else {
    // `kind` says whether trying later could help; `providerCode` is e.g. 131047 or an SMS code.
    console.log(`${what}: not sent (${r.kind}, HTTP ${r.status ?? '-'}, code ${r.providerCode ?? '-'}): ${r.reason}`);
  }
}

// Builders validate against the provider's limits when called (a 25-character row title throws here).
const menu = list({
  header: 'Today at Luigi’s',
  body: 'Two specials, until we run out.',
  button: 'See specials',
  rows: [
    { id: 'calzone', title: 'Calzone', description: 'Ricotta, ham' },
    { id: 'tiramisu', title: 'Tiramisu' },
  ],
});
show('list', await adapter.send({ channel: 'interactive', request: toInteractiveRequest(menu, { from, to }) }));
show('sms', await adapter.send({ channel: 'sms', request: toSmsRequest('Your table is ready.', { to, tag: 'example', ...config.sms }) }));

if (sandbox) {
  // What a refusal looks like: the sandbox answers as the provider does outside the 24-hour window.
  sandbox.sandbox.faults.refuseInteractive(to);
  show('list again', await adapter.send({ channel: 'interactive', request: toInteractiveRequest(menu, { from, to }) }));
}

await adapter.close();
await sandbox?.close();
