#!/usr/bin/env node
// The `colloquy` command. tsx is registered first so bot files written in TypeScript load as they
// are. `colloquy/cli` resolves through the package's exports map: to dist/ when installed, or to
// src/ when Node runs with `--conditions=source` (npm start in a checkout), so the command and the
// bots it loads always share one copy of Colloquy.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('colloquy/cli');
process.exitCode = await main(process.argv.slice(2));
