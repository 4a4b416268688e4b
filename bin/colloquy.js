#!/usr/bin/env node
// The `colloquy` command. tsx, when installed, is registered first so bot files written in
// TypeScript load as they are; it is an optional peer dependency, so without it only JavaScript
// bots load (loadBot says so when it meets a .ts file). `colloquy/cli` resolves through the
// package's exports map: to dist/ when installed, or to src/ under the `colloquy-source` condition
// (npm start in a checkout), so the command and the bots it loads always share one copy of Colloquy.
// A checkout that was never built has no dist/: the command then runs from src/ through tsx,
// adding the `colloquy-source` condition itself, for the bots' `import … from 'colloquy'` too. So
// does a checkout whose dist/ is older than its src/ (built once, then pulled): old code must not
// run against newer migrations.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { register as registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

let tsx = false;
try {
  const { register } = await import('tsx/esm/api');
  register();
  tsx = true;
} catch (err) {
  const missing = err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes("'tsx'");
  if (!missing) throw err;
}

const stale = staleBuild();
if (stale) {
  process.stderr.write(
    tsx
      ? 'colloquy: dist/ is older than src/ in this checkout; running from the sources (`npm run build` brings dist/ up to date).\n'
      : 'colloquy: warning: dist/ is older than src/ in this checkout and tsx is not installed to run the sources; run `npm run build`.\n',
  );
}

if (!resolvesToAFile('colloquy/cli') || (stale && tsx)) {
  if (!tsx || !existsSync(new URL('../src/cli/main.ts', import.meta.url))) {
    process.stderr.write(
      'colloquy: this copy of Colloquy has not been built (no dist/), and tsx, which runs it from its TypeScript sources, is not installed.\n' +
        'In a clone of the repository, run `npm install` first (or `npm run build` to build dist/).\n',
    );
    process.exit(1);
  }
  // Every resolution in this process (the command's and the bots') takes src/ over dist/.
  const hook = `export const resolve = (s, c, next) => next(s, { ...c, conditions: [...c.conditions, 'colloquy-source'] });`;
  registerHooks(`data:text/javascript,${encodeURIComponent(hook)}`);
}

const { main } = await import('colloquy/cli');
process.exitCode = await main(process.argv.slice(2));

/**
 * Whether this is a checkout (a `.git` beside `src/`) whose built command is older than a source
 * file. An installed package has no `.git` and is never stale.
 */
function staleBuild() {
  // Under the `colloquy-source` condition (npm start, npm run colloquy) dist/ is not used at all.
  if ([...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('colloquy-source'))) return false;
  const root = new URL('../', import.meta.url);
  const built = new URL('dist/cli/main.js', root);
  if (!existsSync(new URL('.git', root)) || !existsSync(built)) return false;
  const builtAt = statSync(built).mtimeMs;
  const newer = (dir) =>
    readdirSync(dir, { withFileTypes: true }).some((e) => {
      const path = `${dir}/${e.name}`;
      return e.isDirectory() ? newer(path) : e.name.endsWith('.ts') && statSync(path).mtimeMs > builtAt;
    });
  return newer(fileURLToPath(new URL('src', root)));
}

/** Whether a specifier resolves, under this process's conditions, to a file that is there. */
function resolvesToAFile(specifier) {
  try {
    return existsSync(fileURLToPath(import.meta.resolve(specifier)));
  } catch {
    return false;
  }
}
