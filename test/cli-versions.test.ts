/** The operator commands: check --db (stranded conversations), conversations, transcript. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { migrate, readMigrations } from '../src/store/sqlite/migrate.js';
import { main } from '../src/cli/main.js';
import type { Io } from '../src/cli/io.js';
import type { RunningSandbox } from '../src/sandbox/index.js';
import { shop } from './fixtures/shop-versions.js';
import { tempDir } from './support/temp.js';
import { reply, sandbox, textEvent, world } from './conversation/helpers.js';

const fixture = (f: string) => join(import.meta.dirname, 'fixtures', 'versions', f);

function capture(json = false): Io & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env: {},
    json,
    stdout: () => out,
    stderr: () => err,
  };
}

let sb: RunningSandbox;
let db: string;
let remove: () => void;
const A = '5215500000101';
const B = '5215500000102';
const C = '5215500000103';

/** Version 1 leaves A in ordering.size, B and C in ordering.crust; D finished. */
beforeAll(async () => {
  sb = await sandbox();
  const t = tempDir();
  remove = t.remove;
  db = join(t.dir, 'colloquy.db');
  const w = await world([shop(1)], { path: db, sb });
  for (const u of [A, B, C, '5215500000104']) {
    await w.send(textEvent('hi'), u);
    await w.send(reply('order'), u);
  }
  for (const u of [B, C, '5215500000104']) await w.send(reply('large'), u);
  await w.send(reply('thin'), '5215500000104');
  await w.stop();
});
afterAll(async () => {
  await sb.close();
  remove();
});

describe('colloquy check --db', () => {
  it('names the conversations version 3 would strand, by bot, version and state, and exits 1', async () => {
    const io = capture();
    expect(await main(['check', fixture('shop-v3.ts'), '--db', db], io)).toBe(1);
    const out = io.stdout();
    expect(out).toMatch(
      /shop v1 › ordering\.crust › stranded: 2 live conversations \(2, 3\); version 3 has no state ordering\.crust \(after its migrations\); onIncompatible 'restart' would restart them/,
    );
    expect(out).not.toMatch(/ordering\.size › stranded/);
    expect(out).toMatch(/3 live conversations checked: 2 would be stranded\./);
  });

  it('exits 0 when a migration covers every live state', async () => {
    const io = capture();
    expect(await main(['check', fixture('shop-v2.ts'), '--db', db], io)).toBe(0);
    expect(io.stdout()).toMatch(/3 live conversations checked: none stranded\./);
  });

  it('counts a conversation pinned to a version still served as not stranded', async () => {
    const io = capture();
    expect(await main(['check', fixture('shop-v1.ts'), fixture('shop-v3.ts'), '--db', db], io)).toBe(0);
  });

  it('reads a database an older Colloquy still serves (without bot versions) and leaves it untouched', async () => {
    const old = join(db, '..', 'old.db');
    const raw = new Database(old);
    raw.pragma('journal_mode = WAL');
    migrate(
      raw,
      readMigrations().filter((f) => f.name < '0005'),
    );
    raw
      .prepare(`INSERT INTO conversations (bot_id, user_number, status, snapshot, state, version, flow_token, created_at, updated_at, last_activity_at)
      VALUES ('shop', '5215500000109', 'active', ?, '{"ordering":"crust"}', 3, 'ft_old', 1, 1, 1)`)
      .run(JSON.stringify({ status: 'active', value: { ordering: 'crust' }, context: {}, children: {}, historyValue: {} }));
    raw.close();
    const io = capture();
    expect(await main(['check', fixture('shop-v3.ts'), '--db', old], io)).toBe(1);
    expect(io.stdout()).toMatch(/shop v1 › ordering\.crust › stranded: 1 live conversation \(1\)/);
    const after = new Database(old, { readonly: true });
    expect((after.prepare('SELECT name FROM _migrations ORDER BY name').all() as { name: string }[]).map((r) => r.name).at(-1)).toBe('0004_user_number.sql');
    expect((after.prepare('PRAGMA table_info(conversations)').all() as { name: string }[]).some((c) => c.name === 'bot_version')).toBe(false);
    after.close();
  });

  it('reports in JSON, and refuses a database that does not exist', async () => {
    const io = capture(true);
    expect(await main(['check', fixture('shop-v3.ts'), '--db', db, '--json'], io)).toBe(1);
    const r = JSON.parse(io.stdout()) as { conversations: { stranded: { bot: string; version: number; state: string; toVersion: number; conversations: number[] }[] } };
    expect(r.conversations.stranded).toEqual([expect.objectContaining({ bot: 'shop', version: 1, state: 'ordering.crust', toVersion: 3, conversations: [2, 3] })]);
    const missing = capture();
    expect(await main(['check', fixture('shop-v3.ts'), '--db', join(db, '..', 'nope.db')], missing)).toBe(1);
    expect(missing.stderr()).toMatch(/no database at .*nope\.db/);
  });
});

describe('colloquy conversations', () => {
  it('counts by bot, version, status and state', async () => {
    const io = capture();
    expect(await main(['conversations', '--db', db], io)).toBe(0);
    const lines = io.stdout().trim().split('\n');
    expect(lines[0]).toMatch(/^BOT\s+VERSION\s+STATUS\s+STATE\s+COUNT$/);
    expect(lines).toContainEqual(expect.stringMatching(/^shop\s+v1\s+active\s+ordering\.crust\s+2$/));
    expect(lines).toContainEqual(expect.stringMatching(/^shop\s+v1\s+active\s+ordering\.size\s+1$/));
    expect(lines).toContainEqual(expect.stringMatching(/^shop\s+v1\s+done\s+done\s+1$/));
    expect(lines.at(-1)).toBe('4 conversations.');
  });

  it('filters by state (and the states inside it), status and user, and lists', async () => {
    const io = capture();
    expect(await main(['conversations', '--db', db, '--state', 'ordering', '--status', 'active', '--list'], io)).toBe(0);
    const lines = io.stdout().trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[1]).toMatch(new RegExp(`^1\\s+shop\\s+v1\\s+${A}\\s+active\\s+ordering\\.size\\s+interactive\\s+\\d{4}-`));
    const one = capture(true);
    expect(await main(['conversations', '--db', db, '--user', B, '--list'], one)).toBe(0);
    expect(JSON.parse(one.stdout())).toEqual([expect.objectContaining({ id: 2, user: B, version: 1, state: 'ordering.crust' })]);
    const bad = capture();
    expect(await main(['conversations', '--db', db, '--status', 'sleeping'], bad)).toBe(2);
    expect(bad.stderr()).toMatch(/--status must be one of active, done, expired, failed/);
  });
});

describe('colloquy transcript', () => {
  it('prints both directions in order with delivery results', async () => {
    const io = capture();
    expect(await main(['transcript', '4', '--db', db], io)).toBe(0);
    const lines = io.stdout().trim().split('\n');
    expect(lines[0]).toBe('Conversation 4 · bot shop v1 · user 5215500000104 · done · state done · interactive');
    const body = lines.slice(2).map((l) => l.replace(/^\S+\s+/, ''));
    expect(body[0]).toMatch(/^← whatsapp text "hi"$/);
    expect(body[1]).toMatch(/^→ interactive buttons "Welcome! Order a pizza\?" \[order="Order"\]\s+✓ sent \S+/);
    expect(body[2]).toMatch(/^← whatsapp tap "order" \(reply\.order, button\)$/);
    expect(body.at(-1)).toMatch(/^→ sms\s+text "Done: large thin \(no tag\)"\s+✓ sent/);
    const missing = capture();
    expect(await main(['transcript', '99', '--db', db], missing)).toBe(1);
    expect(missing.stderr()).toMatch(/no conversation 99/);
  });
});
