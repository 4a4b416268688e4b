/**
 * `colloquy conversations [--bot] [--state] [--status] [--user] [--list]`: the conversations of a
 * database, counted by bot, version, status and state, or listed one a line.
 */
import { ColloquyError } from '../errors.js';
import { stateLabel } from '../conversation/stranded.js';
import type { ConversationRecord, ConversationStatus } from '../store/types.js';
import { databaseTarget, openExistingStore } from './store-target.js';
import type { Io } from './io.js';

/** The filters and switches of the command. */
export interface ConversationsOptions {
  readonly db?: string | undefined;
  readonly bot?: string | undefined;
  /** A dotted state path; matches that state and the states inside it. */
  readonly state?: string | undefined;
  readonly status?: string | undefined;
  readonly user?: string | undefined;
  readonly list?: boolean | undefined;
}

const STATUSES: readonly ConversationStatus[] = ['active', 'done', 'expired', 'failed'];

/** Prints counts (or a list); resolves to the exit code. */
export async function conversationsCommand(o: ConversationsOptions, io: Io): Promise<number> {
  if (o.status !== undefined && !STATUSES.includes(o.status as ConversationStatus)) {
    throw new ColloquyError('usage', `--status must be one of ${STATUSES.join(', ')} (got "${o.status}")`);
  }
  const target = databaseTarget(o.db, io);
  const store = await openExistingStore(target);
  let rows: ConversationRecord[];
  try {
    rows = await store.conversations({ ...(o.bot ? { botId: o.bot } : {}), ...(o.user ? { user: o.user } : {}), ...(o.status ? { status: o.status as ConversationStatus } : {}) });
  } finally {
    await store.close();
  }
  const matching = o.state === undefined ? rows : rows.filter((c) => inState(c, o.state!));
  if (o.list) io.out(io.json ? `${JSON.stringify(matching.map(listEntry), null, 2)}\n` : listText(matching));
  else io.out(io.json ? `${JSON.stringify(counts(matching), null, 2)}\n` : countsText(counts(matching), matching.length));
  return 0;
}

/** Whether a conversation is in `state` or a state inside it. */
function inState(c: ConversationRecord, state: string): boolean {
  return stateLabel(c)
    .split(', ')
    .some((p) => p === state || p.startsWith(`${state}.`));
}

interface Count {
  readonly bot: string;
  readonly version: number;
  readonly status: string;
  readonly state: string;
  count: number;
}

function counts(rows: readonly ConversationRecord[]): Count[] {
  const by = new Map<string, Count>();
  for (const c of rows) {
    const state = stateLabel(c);
    const k = JSON.stringify([c.botId, c.botVersion, c.status, state]);
    const entry = by.get(k) ?? { bot: c.botId, version: c.botVersion, status: c.status, state, count: 0 };
    entry.count++;
    by.set(k, entry);
  }
  return [...by.values()].sort((a, b) => a.bot.localeCompare(b.bot) || a.version - b.version || a.status.localeCompare(b.status) || b.count - a.count || a.state.localeCompare(b.state));
}

function countsText(rows: readonly Count[], total: number): string {
  if (total === 0) return 'No conversations match.\n';
  const table = [['BOT', 'VERSION', 'STATUS', 'STATE', 'COUNT'], ...rows.map((r) => [r.bot, `v${r.version}`, r.status, r.state, String(r.count)])];
  return `${columns(table)}${total} conversation${total === 1 ? '' : 's'}.\n`;
}

function listEntry(c: ConversationRecord) {
  return {
    id: c.id,
    bot: c.botId,
    version: c.botVersion,
    user: c.user,
    status: c.status,
    state: stateLabel(c),
    channel: c.channel,
    createdAt: iso(c.createdAt),
    lastActivityAt: iso(c.lastActivityAt),
    endedAt: c.endedAt === null ? null : iso(c.endedAt),
  };
}

function listText(rows: readonly ConversationRecord[]): string {
  if (rows.length === 0) return 'No conversations match.\n';
  const table = [
    ['ID', 'BOT', 'VERSION', 'USER', 'STATUS', 'STATE', 'CHANNEL', 'LAST ACTIVITY'],
    ...rows.map((c) => [String(c.id), c.botId, `v${c.botVersion}`, c.user, c.status, stateLabel(c), c.channel, iso(c.lastActivityAt)]),
  ];
  return columns(table);
}

/** A time as ISO 8601 (UTC, seconds). */
export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Rows of cells as aligned columns. */
export function columns(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}
