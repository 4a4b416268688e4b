/** `colloquy graph <bot file>`: prints the bot's conversation as a Mermaid state diagram. */
import { ColloquyError } from '../errors.js';
import { mermaidGraph } from '../simulator/graph.js';
import type { Io } from './io.js';
import { loadBots } from './load.js';

const USAGE = 'usage: colloquy graph <bot file>';

/** Prints the diagram (or `{bot, mermaid}` with `--json`); resolves to the exit code. */
export async function graphCommand(args: readonly string[], io: Io): Promise<number> {
  const [file, ...extra] = args;
  if (file === undefined || extra.length > 0) throw new ColloquyError('usage', USAGE);
  const bots = await loadBots([file]);
  const bot = bots[0];
  if (bot === undefined || bots.length > 1) throw new ColloquyError('usage', `${file} holds ${bots.length} bots; name one bot file\n${USAGE}`);
  const mermaid = mermaidGraph(bot);
  io.out(io.json ? `${JSON.stringify({ bot: bot.id, mermaid })}\n` : mermaid);
  return 0;
}
