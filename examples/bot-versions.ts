/**
 * Changing a bot while conversations are in progress: version 1 of a coffee bot leaves two
 * conversations half-way; version 2 renames one state (with a migration) and drops another. The
 * pre-deploy check names the conversation version 2 alone would strand; served side by side, the
 * migrated conversation moves to version 2, the other finishes on version 1, and a new one starts
 * on version 2.
 *
 *   node --conditions=colloquy-source --import tsx examples/bot-versions.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assign, setup } from 'xstate';
import { buttons, defineBot, say, text, type Bot, type ColloquyEvent } from 'colloquy';
import { Runtime, createHttpAdapter, findStranded, loadConfig } from 'colloquy/server';
import { openSqliteStore } from 'colloquy/sqlite';
import { startSandbox, SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER } from 'colloquy/sandbox';

type Ctx = { size?: string; milk?: string; note?: string };
const sizes = buttons({
  body: 'Which size?',
  buttons: [
    { id: 'regular', title: 'Regular' },
    { id: 'large', title: 'Large' },
  ],
});
const welcome = buttons({ body: 'A flat white?', buttons: [{ id: 'flat-white', title: 'Flat white' }] });

// Version 1: menu → size → milk → done.
const v1 = defineBot({
  id: 'coffee',
  machine: setup({ types: { context: {} as Ctx, events: {} as ColloquyEvent } }).createMachine({
    context: {},
    initial: 'menu',
    states: {
      menu: { entry: say(welcome), on: { 'reply.flat-white': 'size' } },
      size: { entry: say(sizes), on: { 'reply.large': { target: 'milk', actions: assign({ size: 'large' }) }, 'reply.regular': { target: 'milk', actions: assign({ size: 'regular' }) } } },
      milk: {
        entry: say(
          buttons({
            body: 'Milk?',
            buttons: [
              { id: 'oat', title: 'Oat' },
              { id: 'cow', title: 'Cow' },
            ],
          }),
        ),
        on: { 'reply.oat': { target: 'done', actions: assign({ milk: 'oat' }) }, 'reply.cow': { target: 'done', actions: assign({ milk: 'cow' }) } },
      },
      done: { type: 'final', entry: say(({ context }) => text(`Your ${context.size} flat white with ${context.milk} milk is on its way`)) },
    },
  }),
});

// Version 2: `size` is now `cupSize`, and there is no milk question. The migration renames the
// state and notes it in the context; nothing can carry a conversation waiting in `milk`.
const v2 = defineBot({
  id: 'coffee',
  version: 2,
  migrations: { 2: { states: { size: 'cupSize' }, context: (ctx: Ctx) => ({ ...ctx, note: 'migrated from v1' }) } },
  machine: setup({ types: { context: {} as Ctx, events: {} as ColloquyEvent } }).createMachine({
    context: {},
    initial: 'menu',
    states: {
      menu: { entry: say(welcome), on: { 'reply.flat-white': 'cupSize' } },
      cupSize: { entry: say(sizes), on: { 'reply.large': { target: 'done', actions: assign({ size: 'large' }) }, 'reply.regular': { target: 'done', actions: assign({ size: 'regular' }) } } },
      done: { type: 'final', entry: say(({ context }) => text(`Your ${context.size} flat white is on its way${context.note ? ` (${context.note})` : ''}`)) },
    },
  }),
});

const config = loadConfig();
const sandbox = config.provider.kind === 'sandbox' ? await startSandbox({ port: 0 }) : undefined;
const dir = mkdtempSync(join(tmpdir(), 'colloquy-versions-'));
const path = join(dir, 'colloquy.db');
const users = { ana: '5215500000201', ben: '5215500000202', cleo: '5215500000203' };
let n = 0;

/** A runtime on the database file serving `bots`, for one phase of the example. */
async function serving(bots: Bot[], fn: (tap: (user: string, id: string) => Promise<void>, runtime: Runtime) => Promise<void>): Promise<void> {
  const adapter = createHttpAdapter(
    config.provider.kind === 'real' ? config.provider : { baseUrl: sandbox!.url, authUrl: sandbox!.url, clientId: SANDBOX_CLIENT_ID, clientSecret: SANDBOX_CLIENT_SECRET },
  );
  const store = openSqliteStore(path);
  const runtime = new Runtime({ store, adapter, bots, sender: config.sender ?? SANDBOX_SENDER });
  await runtime.start();
  const tap = async (user: string, id: string) => {
    const event = id === 'hi' ? { type: 'text', text: 'hi' } : { type: `reply.${id}`, id, title: id, via: 'button' };
    await runtime.receive({ botId: 'coffee', user, providerId: `wamid.example${++n}`, source: 'whatsapp', event });
    await runtime.idle();
  };
  try {
    await fn(tap, runtime);
  } finally {
    await runtime.stop();
    await adapter.close();
    await store.close();
  }
}

async function where(runtime: Runtime, name: keyof typeof users): Promise<string> {
  const [conv] = (await runtime.store.conversations({ botId: 'coffee', user: users[name] })).slice(-1);
  const last = (await runtime.transcript(conv!.id)).filter((e) => e.direction === 'out').at(-1);
  const said = last?.direction === 'out' ? (last.record.message as { text?: string; replyButtons?: { body: string } }) : undefined;
  return `${name}: v${conv!.botVersion} ${conv!.status} in ${conv!.state}: "${said?.text ?? said?.replyButtons?.body ?? ''}"`;
}

try {
  await serving([v1], async (tap, runtime) => {
    for (const id of ['hi', 'flat-white']) await tap(users.ana, id);
    for (const id of ['hi', 'flat-white', 'large']) await tap(users.ben, id);
    console.log('version 1 served:');
    for (const name of ['ana', 'ben'] as const) console.log(`  ${await where(runtime, name)}`);
  });

  const store = openSqliteStore(path);
  for (const bots of [[v2], [v1, v2]]) {
    const report = await findStranded(store, bots);
    const label = bots.map((b) => `v${b.version}`).join(' + ');
    if (report.stranded.length === 0) console.log(`check before serving ${label}: ${report.checked} live conversations, none stranded`);
    for (const g of report.stranded) console.log(`check before serving ${label}: ${g.bot} v${g.version} › ${g.state}: ${g.conversations.length} stranded (${g.reason}; onIncompatible '${g.policy}')`);
  }
  await store.close();

  await serving([v1, v2], async (tap, runtime) => {
    await tap(users.ana, 'large'); // migrated: size → cupSize
    await tap(users.ben, 'oat'); // pinned: finishes on version 1
    await tap(users.cleo, 'hi'); // new: starts on version 2
    console.log('versions 1 and 2 served:');
    for (const name of ['ana', 'ben', 'cleo'] as const) console.log(`  ${await where(runtime, name)}`);
  });
} finally {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
}
