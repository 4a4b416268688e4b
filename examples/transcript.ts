/**
 * A short conversation through the runtime, then its transcript as a table: both directions in
 * order, each message's delivery result (HTTP status, provider id, SMS code and mailing id,
 * delivery status) and the SMS fallback it needed.
 *
 *   node --conditions=colloquy-source --import tsx examples/transcript.ts
 */
import { setup } from 'xstate';
import { buttons, defineBot, list, say, text, type ColloquyEvent, type Message } from 'colloquy';
import { Runtime, createHttpAdapter, loadConfig, type TranscriptEntry } from 'colloquy/server';
import { openSqliteStore } from 'colloquy/sqlite';
import { renderSms } from 'colloquy/messages';
import { startSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER } from 'colloquy/sandbox';

const machine = setup({ types: { events: {} as ColloquyEvent } }).createMachine({
  initial: 'menu',
  states: {
    menu: {
      entry: say(
        list({
          body: 'What can I get you?',
          button: 'Drinks',
          rows: [
            { id: 'flat-white', title: 'Flat white' },
            { id: 'tea', title: 'Tea' },
          ],
        }),
      ),
      on: { 'reply.flat-white': 'size', 'reply.tea': 'size' },
    },
    size: {
      entry: say(
        buttons({
          body: 'Which size?',
          buttons: [
            { id: 'regular', title: 'Regular' },
            { id: 'large', title: 'Large' },
          ],
        }),
      ),
      on: { 'reply.regular': 'done', 'reply.large': 'done' },
    },
    done: { type: 'final', entry: say(text('Coming right up!')) },
  },
});
const coffee = defineBot({ id: 'coffee', machine });

// The real provider when COLLOQUY_BASE_URL (and friends) are set; otherwise a sandbox in-process.
const config = loadConfig();
const sandbox = config.provider.kind === 'sandbox' ? await startSandbox({ port: 0 }) : undefined;
const adapter = createHttpAdapter(
  config.provider.kind === 'real' ? config.provider : { baseUrl: sandbox!.url, authUrl: sandbox!.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET },
);
const store = openSqliteStore(':memory:');
const runtime = new Runtime({ store, adapter, bots: [coffee], sender: config.sender ?? SANDBOX_SENDER, sms: config.sms });
await runtime.start();
const user = process.env['EXAMPLE_TO'] ?? '5215512345678';
const key = { botId: 'coffee', user };

// What the webhook does for each inbound and status; runtime.idle() waits for the turns and sends.
await runtime.receive({ ...key, source: 'whatsapp', event: { type: 'text', text: 'hi', via: 'whatsapp' } });
await runtime.idle();
const [, list1] = await runtime.transcript(key);
if (list1?.direction === 'out' && list1.record.providerId) await runtime.receiveStatus({ providerMessageId: list1.record.providerId, status: 'read', recipient: user });
sandbox?.sandbox.faults.refuseInteractive(user); // from here the interactive channel refuses (131047)
await runtime.receive({ ...key, source: 'whatsapp', event: { type: 'reply.flat-white', id: 'flat-white', title: 'Flat white', via: 'list' } });
await runtime.idle();
await runtime.receive({ ...key, source: 'sms', event: { type: 'text', text: '2', via: 'sms' } }); // "2" = Large, by SMS
await runtime.idle();

const oneLine = (s: string, n = 38) => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};
function row(e: TranscriptEntry): string[] {
  const time = new Date(e.at).toISOString().slice(11, 23);
  if (e.direction === 'in') {
    const ev = e.event as { type: string; text?: string; title?: string; via?: string };
    return [time, 'in', `${ev.type} ${JSON.stringify(ev.text ?? ev.title ?? '')}`, e.source, e.state + (e.error ? ` ${e.error}` : '')];
  }
  const r = e.record;
  const result = [
    r.state,
    r.httpStatus && `HTTP ${r.httpStatus}`,
    r.errorCode && `code ${r.errorCode}`,
    r.providerId && `id ${oneLine(r.providerId, 14)}`,
    r.smsCode !== null && `sms code ${r.smsCode} ${r.smsResult ?? ''}`,
    r.deliveryStatus && `status ${r.deliveryStatus}`,
    r.fallbackOf && `fallback of #${r.fallbackOf}`,
  ];
  return [time, `out #${r.id}`, `${r.kind} ${JSON.stringify(oneLine(renderSms(r.message as Message)))}`, r.channel, result.filter(Boolean).join(', ')];
}
const rows = [['time', 'dir', 'what', 'channel', 'result'], ...(await runtime.transcript(key)).map(row)];
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const r of rows)
  console.log(
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
const conv = (await store.conversations(key)).at(-1);
console.log(`conversation ${conv?.id}: ${conv?.status}, state ${conv?.state}, channel ${conv?.channel}`);

await runtime.stop();
await adapter.close();
await store.close();
await sandbox?.close();
