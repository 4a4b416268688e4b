/**
 * A custom SMS fallback policy. SMS costs money and can wake people up, so this bot falls back
 * only when WhatsApp cannot reach the user (131047: outside the 24-hour window; 131026:
 * undeliverable) and never during quiet hours (21:00–08:00). Anything else reaches the machine
 * as `delivery.failed`, which moves it to a state your staff can act on.
 *
 *   node --conditions=colloquy-source --import tsx examples/custom-fallback.ts
 */
import { setup } from 'xstate';
import { UNREACHABLE_CODES, buttons, defineBot, say, type ColloquyEvent, type FallbackInfo } from 'colloquy';
import { Runtime, createHttpAdapter, loadConfig } from 'colloquy/server';
import { openSqliteStore } from 'colloquy/sqlite';
import { startSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER } from 'colloquy/sandbox';

// The user's local hour. In production, from their time zone; the demo below sets it per case.
let localHour = (): number => new Date().getHours();
const quiet = (hour: number) => hour >= 21 || hour < 8;
const smsWhenUnreachableAndAwake = (info: FallbackInfo): boolean => UNREACHABLE_CODES.includes(Number(info.code)) && !quiet(localHour());

const machine = setup({ types: { events: {} as ColloquyEvent } }).createMachine({
  initial: 'asking',
  states: {
    asking: {
      entry: say(
        buttons({
          body: 'Your appointment is tomorrow at 10:00. Still good?',
          buttons: [
            { id: 'yes', title: 'Yes' },
            { id: 'move', title: 'Reschedule' },
          ],
        }),
      ),
      on: { 'reply.yes': 'confirmed', 'reply.move': 'confirmed', 'delivery.failed': 'phoneThem' },
    },
    confirmed: { type: 'final' },
    phoneThem: { type: 'final' }, // e.g. a task for the front desk to call in the morning
  },
});
const reminders = defineBot({ id: 'reminders', machine, options: { fallback: { shouldFallBack: smsWhenUnreachableAndAwake } } });

// The real provider when COLLOQUY_BASE_URL (and friends) are set; otherwise a sandbox in-process.
const config = loadConfig();
const sandbox = config.provider.kind === 'sandbox' ? await startSandbox({ port: 0 }) : undefined;
const adapter = createHttpAdapter(
  config.provider.kind === 'real' ? config.provider : { baseUrl: sandbox!.url, authUrl: sandbox!.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET },
);
const store = openSqliteStore(':memory:');
const runtime = new Runtime({ store, adapter, bots: [reminders], sender: config.sender ?? SANDBOX_SENDER, sms: config.sms });
await runtime.start();

// The sandbox refuses the bot's buttons with a chosen code (for real, 131047 comes when a bot speaks
// 24 h after the user last wrote). Against the real provider nothing is injected: EXAMPLE_TO gets one try.
const cases = sandbox
  ? [
      { user: '5215500000001', hour: 14, code: 131047 },
      { user: '5215500000002', hour: 23, code: 131047 },
      { user: '5215500000003', hour: 14, code: 131009 },
    ]
  : [{ user: process.env['EXAMPLE_TO'] ?? '5215512345678', hour: new Date().getHours(), code: undefined }];

for (const { user, hour, code } of cases) {
  localHour = () => hour;
  if (code !== undefined) sandbox?.sandbox.faults.refuseInteractive(user, { code });
  await runtime.receive({ botId: 'reminders', user, event: { type: 'text', text: 'hi' } }); // as the webhook would
  await runtime.idle(); // the turn, the refused send, then the SMS or the delivery.failed turn
  console.log(`${user} at ${String(hour).padStart(2, '0')}:00, WhatsApp answers ${code ?? 'whatever it answers'}:`);
  for (const e of await runtime.transcript({ botId: 'reminders', user })) {
    if (e.direction === 'in') {
      const ev = e.event as { type: string; text?: string; code?: string | number };
      console.log(`  in   ${ev.type}${ev.text ? ` ${JSON.stringify(ev.text)}` : ''}${ev.code ? ` (code ${ev.code})` : ''}`);
      continue;
    }
    const r = e.record;
    const sms = r.channel === 'sms' ? `: ${JSON.stringify((r.request as { message: string }).message)}` : '';
    console.log(`  out  #${r.id} ${r.kind} by ${r.channel}, ${r.state}${r.errorCode ? ` (${r.errorCode})` : ''}${r.fallbackOf ? `, fallback of #${r.fallbackOf}` : ''}${sms}`);
  }
  console.log(`  state: ${(await store.conversations({ botId: 'reminders', user })).at(-1)?.state}`);
}

await runtime.stop();
await adapter.close();
await store.close();
await sandbox?.close();
