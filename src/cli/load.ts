/** Loads bot modules: files or folders, TypeScript or JavaScript. */
import { readdirSync, statSync } from 'node:fs';
import { resolve, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, MessageValidationError, formatIssues } from '../errors.js';
import { isBot, type Bot } from '../conversation/bot.js';

const BOT_FILE = /\.(ts|mts|js|mjs)$/;
const NOT_A_BOT = /(\.d\.ts|\.test\.[mc]?[tj]s|\.spec\.[mc]?[tj]s)$/;

/** The bot files a list of paths names (a folder stands for its bot files, sorted). */
export function botFiles(paths: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const abs = resolve(p);
    let st;
    try {
      st = statSync(abs);
    } catch {
      throw new ConfigError('bots', `no such file or folder: ${p}`);
    }
    if (st.isDirectory()) {
      out.push(
        ...readdirSync(abs)
          .filter((f) => BOT_FILE.test(f) && !NOT_A_BOT.test(f) && !f.startsWith('_'))
          .sort()
          .map((f) => join(abs, f)),
      );
    } else out.push(abs);
  }
  return out;
}

/**
 * Imports each file and takes the bot it exports (default export, or a single named one). Two
 * files may define one bot id in different versions (served side by side); the same id and
 * version twice is an error.
 */
export async function loadBots(paths: readonly string[]): Promise<Bot[]> {
  const files = botFiles(paths);
  if (files.length === 0) throw new ConfigError('bots', `no bot files in ${paths.join(', ') || '(nothing given)'}`);
  const bots: { bot: Bot; file: string }[] = [];
  for (const file of files) bots.push({ bot: await loadBot(file), file });
  const seen = new Map<string, string>();
  for (const { bot, file } of bots) {
    const k = `${bot.id}@${bot.version}`;
    const other = seen.get(k);
    if (other !== undefined) {
      throw new ConfigError('bots', `two bot files define the bot id "${bot.id}" with version ${bot.version} (${other}, ${file}); give one of them another version`);
    }
    seen.set(k, file);
  }
  return bots.map((b) => b.bot);
}

/** Imports one bot file. */
export async function loadBot(file: string): Promise<Bot> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(file)).href)) as Record<string, unknown>;
  } catch (err) {
    if (err instanceof MessageValidationError) {
      // A builder called at the top of the module (say(list({...}))) runs on import, outside any state.
      throw new ConfigError('bots', `${file}: a message built when the module loads is invalid; build it inside say(() => …) so the error names its state:\n${formatIssues(err.issues)}`, {
        cause: err,
      });
    }
    if (/\.[mc]?ts$/.test(file) && !tsxInstalled()) {
      throw new ConfigError('bots', `cannot load ${file}: TypeScript bot files need tsx, an optional peer dependency of colloquy (npm install tsx), or compile them to .js`, { cause: err });
    }
    throw new ConfigError('bots', `cannot load ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (isBot(mod['default'])) return mod['default'];
  const named = Object.values(mod).filter(isBot);
  if (named.length === 1) return named[0]!;
  throw new ConfigError('bots', named.length ? `${file} exports ${named.length} bots; export one as default` : `${file} exports no bot (export default defineBot({...}))`);
}

/** Whether tsx, which the `colloquy` command registers to load TypeScript, can be found. */
function tsxInstalled(): boolean {
  try {
    import.meta.resolve('tsx/esm/api');
    return true;
  } catch {
    return false;
  }
}
