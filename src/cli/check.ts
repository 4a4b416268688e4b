/**
 * `colloquy check [bot files or folders…]`: walks every bot's machine and reports each finding
 * as `bot › state › kind (id): message` (a warning's kind followed by `(warning)`), then a summary.
 * Exit code 1 on any finding but warnings, 0 when clean or only warned.
 */
import type { Bot } from '../conversation/bot.js';
import { checkBot, type Finding } from '../simulator/check.js';
import type { Io } from './io.js';
import { loadBots } from './load.js';
import { openExistingStore } from './store-target.js';
import { findStranded, type StrandReport } from '../conversation/stranded.js';

/**
 * Checks the bots the paths name (files or folders); resolves to the exit code. With `db`, also
 * reports the live conversations of that database these bots would strand (before a deploy).
 */
export async function checkCommand(paths: readonly string[], io: Io, db?: string): Promise<number> {
  const bots = await loadBots(paths);
  const findings = bots.flatMap(checkBot);
  const strand = db === undefined ? undefined : await strandReport(db, bots);
  if (io.json) io.out(`${JSON.stringify({ bots: bots.map((b) => b.id), findings, ...(strand ? { db, conversations: strand } : {}) }, null, 2)}\n`);
  else io.out(report(bots, findings) + (strand ? strandText(db!, strand) : ''));
  return findings.some((f) => f.severity !== 'warning') || (strand?.stranded.length ?? 0) > 0 ? 1 : 0;
}

async function strandReport(db: string, bots: readonly Bot[]): Promise<StrandReport> {
  const store = await openExistingStore(db);
  try {
    return await findStranded(store, bots);
  } finally {
    await store.close();
  }
}

/** The stranded conversations by bot, version and state, then a summary line. */
export function strandText(db: string, r: StrandReport): string {
  const lines = r.stranded.map((g) => {
    const n = g.conversations.length;
    const ids = g.conversations.slice(0, 10).join(', ') + (n > 10 ? ', …' : '');
    return `${g.bot} v${g.version} › ${g.state} › stranded: ${n} live conversation${n === 1 ? '' : 's'} (${ids}); ${g.reason}; onIncompatible '${g.policy}' would ${POLICY_EFFECT[g.policy]}`;
  });
  for (const [bot, n] of Object.entries(r.otherBots)) lines.push(`(${n} live conversation${n === 1 ? '' : 's'} of bot "${bot}", not among the files given, not checked)`);
  const total = r.stranded.reduce((n, g) => n + g.conversations.length, 0);
  lines.push(
    total === 0
      ? `${db}: ${r.checked} live conversation${r.checked === 1 ? '' : 's'} checked: none stranded.`
      : `${db}: ${r.checked} live conversation${r.checked === 1 ? '' : 's'} checked: ${total} would be stranded.`,
  );
  return `${lines.join('\n')}\n`;
}

const POLICY_EFFECT = { restart: 'restart them from the initial state', end: 'end them', fail: 'fail them' } as const;

/** One line per finding, then the summary line. */
export function report(bots: readonly Bot[], findings: readonly Finding[]): string {
  return [...findings.map(formatFinding), summaryLine(bots, findings)].join('\n') + '\n';
}

/** `bot › state › kind (id): message`, or `bot › state › kind (id) (warning): message`. */
export function formatFinding(f: Finding): string {
  return `${f.bot} › ${f.state} › ${f.kind}${f.id === undefined ? '' : ` (${f.id})`}${f.severity === 'warning' ? ' (warning)' : ''}: ${f.message}`;
}

function summaryLine(bots: readonly Bot[], findings: readonly Finding[]): string {
  const checked = `${bots.length} bot${bots.length === 1 ? '' : 's'} checked`;
  if (findings.length === 0) return `${checked}: no findings.`;
  const withFindings = new Set(findings.map((f) => f.bot)).size;
  const warnings = findings.filter((f) => f.severity === 'warning').length;
  const of = warnings === 0 ? '' : warnings === findings.length ? ` (${plural(warnings, 'warning')} only)` : ` (${plural(warnings, 'warning')})`;
  return `${checked}: ${plural(findings.length, 'finding')}${of} in ${plural(withFindings, 'bot')}.`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
