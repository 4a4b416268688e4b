/**
 * `colloquy agents add|list|remove|rotate`: the agents of a database, each with a token of its own.
 * A token is printed once, when it is made (`add`, `rotate`); the database keeps only its hash.
 * Removing an agent or giving it a new token stops the old token and its inbox sessions at once.
 */
import { existsSync } from 'node:fs';
import { agentNameProblem } from '../conversation/handoff-desk.js';
import { ColloquyError } from '../errors.js';
import { newAgentToken, secretHash } from '../agent/sessions.js';
import { sqliteDriver } from '../store/drivers.js';
import { readMigrations } from '../store/migration-files.js';
import { describeStoreLocation, openStore, storeDialect } from '../store/open.js';
import type { Store } from '../store/types.js';
import { databaseTarget } from './store-target.js';
import type { Io } from './io.js';

const USAGE = 'usage: colloquy agents add NAME | list | remove NAME | rotate NAME [--db <file or url>]';

/** Runs a `colloquy agents` subcommand; resolves to the exit code. */
export async function agentsCommand(args: readonly string[], db: string | undefined, io: Io): Promise<number> {
  const [sub, ...rest] = args;
  const wants = sub === 'list' ? 0 : 1;
  if (sub === undefined || !['add', 'list', 'remove', 'rotate'].includes(sub)) throw new ColloquyError('usage', sub === undefined ? USAGE : `unknown subcommand "${sub}"\n${USAGE}`);
  if (rest.length !== wants) throw new ColloquyError('usage', `${wants ? `agents ${sub} takes one agent name` : 'agents list takes no name'}\n${USAGE}`);
  const name = rest[0] ?? '';
  if (wants) checkName(name);
  const target = databaseTarget(db, io);
  const store = await openAgents(target);
  try {
    switch (sub) {
      case 'add':
        return await add(store, name, io);
      case 'rotate':
        return await rotate(store, name, io);
      case 'remove':
        return await remove(store, name, io);
      default:
        return await list(store, io);
    }
  } finally {
    await store.close();
  }
}

/** The API's rule for names, and no space at either end (the API trims the names requests give). */
function checkName(name: string): void {
  const problem = agentNameProblem(name) ?? (name.trim() !== name ? 'must not begin or end with a space' : undefined);
  if (problem !== undefined) throw new ColloquyError('usage', `the agent's name ${problem}`);
}

/** Opens the database as it is (no migration, no new file): agents live in a database a server uses. */
async function openAgents(target: string): Promise<Store> {
  const where = describeStoreLocation(target);
  const notMigrated = (what: string, cause?: unknown) =>
    new ColloquyError('not_migrated', `the database at ${where} ${what}: run \`colloquy migrate\` first`, ...(cause === undefined ? [] : [{ cause }]));
  if (storeDialect(target) === 'sqlite') {
    if (!existsSync(target)) throw new ColloquyError('no_database', `there is no database at ${where}: start the server once, or run \`colloquy migrate\`, first`);
    const missing = missingSqliteMigrations(target);
    if (missing.length) throw notMigrated(`is missing migrations ${missing.join(', ')}`);
  }
  const store = await openStore({ url: target, migrate: false });
  try {
    await store.agents();
  } catch (err) {
    await store.close();
    if (/relation "agents" does not exist/.test((err as Error).message)) throw notMigrated('has no agents table', err);
    throw err;
  }
  return store;
}

/** The package's migrations a SQLite file lacks: checked before opening, since a store prepares its statements as it opens. */
function missingSqliteMigrations(path: string): string[] {
  const d = new (sqliteDriver())(path, { readonly: true, fileMustExist: true });
  try {
    const tracked = d.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'`).get() !== undefined;
    const applied = new Set(tracked ? (d.prepare('SELECT name FROM _migrations').all() as { name: string }[]).map((r) => r.name) : []);
    return readMigrations()
      .map((f) => f.name)
      .filter((n) => !applied.has(n));
  } finally {
    d.close();
  }
}

async function add(store: Store, name: string, io: Io): Promise<number> {
  const token = newAgentToken();
  if (!(await store.addAgent(name, secretHash(token), Date.now()))) {
    throw new ColloquyError('agent_exists', `there is already an agent ${JSON.stringify(name)} (\`colloquy agents rotate ${name}\` gives it a new token)`);
  }
  showToken(io, name, token, `Added agent ${JSON.stringify(name)}.`);
  return 0;
}

async function rotate(store: Store, name: string, io: Io): Promise<number> {
  const token = newAgentToken();
  if (!(await store.setAgentToken(name, secretHash(token)))) throw noSuchAgent(name);
  showToken(io, name, token, `Agent ${JSON.stringify(name)} has a new token; the old one and its inbox sessions no longer work.`);
  return 0;
}

async function remove(store: Store, name: string, io: Io): Promise<number> {
  const r = await store.removeAgent(name, { now: Date.now(), notify: connectorConfigured(io) });
  if (!r.removed) throw noSuchAgent(name);
  if (io.json) io.out(`${JSON.stringify({ agent: name, removed: true, sessions: r.sessions, claims: r.claims })}\n`);
  else {
    const sessions = `${r.sessions} inbox session${r.sessions === 1 ? '' : 's'} ended`;
    const claims = `${r.claims} claimed conversation${r.claims === 1 ? '' : 's'} back in the queue`;
    io.out(`Removed agent ${JSON.stringify(name)}: its token no longer works, ${sessions}, ${claims}.\n`);
  }
  return 0;
}

async function list(store: Store, io: Io): Promise<number> {
  const claims = new Map<string, number>();
  for (const h of await store.openHandoffs()) if (h.state === 'claimed' && h.agent !== null) claims.set(h.agent, (claims.get(h.agent) ?? 0) + 1);
  const rows = (await store.agents()).map((a) => ({ name: a.name, createdAt: a.createdAt, claims: claims.get(a.name) ?? 0 }));
  if (io.json) io.out(`${JSON.stringify(rows, null, 2)}\n`);
  else if (rows.length === 0) io.out('No agents. Add one with `colloquy agents add NAME`.\n');
  else io.out(table([['NAME', 'CREATED', 'CLAIMS'], ...rows.map((r) => [r.name, new Date(r.createdAt).toISOString(), String(r.claims)])]));
  return 0;
}

/** Prints a token, the one time it exists outside the agent's hands. */
function showToken(io: Io, name: string, token: string, headline: string): void {
  if (io.json) {
    io.out(`${JSON.stringify({ agent: name, token })}\n`);
    return;
  }
  io.out(`${headline} Its token:\n\n  ${token}\n\nIt will not be shown again: the database keeps only its hash.\n`);
}

const noSuchAgent = (name: string) => new ColloquyError('no_such_agent', `there is no agent ${JSON.stringify(name)} (\`colloquy agents list\` shows them)`);

/** The helpdesk connector gets `handoff.claim_expired` for claims a removal puts back, as the server would send it. */
const connectorConfigured = (io: Io): boolean => Boolean(io.env['COLLOQUY_HANDOFF_WEBHOOK_URL']);

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 2))).join('')).join('\n') + '\n';
}
