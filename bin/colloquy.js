#!/usr/bin/env node
// The `colloquy` command. tsx, when installed, is registered first so bot files written in
// TypeScript load as they are; it is an optional peer dependency, so without it only JavaScript
// bots load (loadBot says so when it meets a .ts file). `colloquy/cli` resolves through the
// package's exports map: to dist/ when installed, or to src/ when Node runs with
// `--conditions=colloquy-source` (npm start in a checkout), so the command and the bots it loads always
// share one copy of Colloquy.
try {
  const { register } = await import('tsx/esm/api');
  register();
} catch (err) {
  const missing = err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes("'tsx'");
  if (!missing) throw err;
}
const { main } = await import('colloquy/cli');
process.exitCode = await main(process.argv.slice(2));
