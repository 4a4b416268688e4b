/**
 * `colloquy check [bot files or folders…]`: walks every bot's machine and reports each finding
 * as `bot › state › kind (id): message`, then a summary. Exit code 1 on any finding, 0 when clean.
 */
import type { Bot } from '../conversation/bot.js';
import { checkBot, type Finding } from '../simulator/check.js';
import type { Io } from './io.js';
import { loadBots } from './load.js';

/** Checks the bots the paths name (files or folders); resolves to the exit code. */
export async function checkCommand(paths: readonly string[], io: Io): Promise<number> {
  const bots = await loadBots(paths);
  const findings = bots.flatMap(checkBot);
  if (io.json) io.out(`${JSON.stringify({ bots: bots.map((b) => b.id), findings }, null, 2)}\n`);
  else io.out(report(bots, findings));
  return findings.length > 0 ? 1 : 0;
}

/** One line per finding, then the summary line. */
export function report(bots: readonly Bot[], findings: readonly Finding[]): string {
  return [...findings.map(formatFinding), summaryLine(bots, findings)].join('\n') + '\n';
}

/** `bot › state › kind (id): message`. */
export function formatFinding(f: Finding): string {
  return `${f.bot} › ${f.state} › ${f.kind}${f.id === undefined ? '' : ` (${f.id})`}: ${f.message}`;
}

function summaryLine(bots: readonly Bot[], findings: readonly Finding[]): string {
  const checked = `${bots.length} bot${bots.length === 1 ? '' : 's'} checked`;
  if (findings.length === 0) return `${checked}: no findings.`;
  const withFindings = new Set(findings.map((f) => f.bot)).size;
  return `${checked}: ${findings.length} finding${findings.length === 1 ? '' : 's'} in ${withFindings} bot${withFindings === 1 ? '' : 's'}.`;
}
