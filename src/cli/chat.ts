/** `colloquy chat <bot file>`: chat with a bot in the terminal (see src/simulator/chat.ts). */
import { loadConfig } from '../config.js';
import { ColloquyError } from '../errors.js';
import { runChat } from '../simulator/chat.js';
import type { Io } from './io.js';
import { loadBot } from './load.js';

/**
 * Runs a chat with the bot in `args[0]`, reading lines from `input` (default stdin) until `/quit`
 * or the input ends. Resolves to the exit code.
 */
export async function chatCommand(args: readonly string[], io: Io, input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout): Promise<number> {
  if (args.length !== 1) throw new ColloquyError('usage', `chat takes one bot file (got ${args.length}): colloquy chat <bot file>`);
  const bot = await loadBot(args[0]!);
  // The provider the sandbox plays, as for `serve`: COLLOQUY_PROVIDER=cloud-api chats over the Cloud API.
  const provider = loadConfig(io.env).provider;
  const cloud = provider.kind === 'cloud-api' || (provider.kind === 'sandbox' && provider.api === 'cloud-api');
  await runChat({ bot, out: (text) => io.out(text), input, output, harness: { provider: cloud ? 'cloud-api' : 'seed' } });
  return 0;
}
