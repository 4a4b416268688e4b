/**
 * The `colloquy` command line. Every failure is one clear message on stderr and a non-zero exit
 * code (see failure.ts); a stack trace only with `--debug`.
 */
import { parseArgs } from 'node:util';
import { ColloquyError } from '../errors.js';
import { reportFailure } from './failure.js';
import { USAGE } from './help.js';
import { processIo, type Io } from './io.js';

/** Runs the command line; resolves to the exit code. */
export async function main(argv: readonly string[], io?: Io): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        to: { type: 'string' },
        from: { type: 'string' },
        port: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
        db: { type: 'string' },
        bot: { type: 'string' },
        state: { type: 'string' },
        status: { type: 'string' },
        user: { type: 'string' },
        list: { type: 'boolean' },
        debug: { type: 'boolean' },
        out: { type: 'string' },
        'passphrase-env': { type: 'string' },
      },
    });
  } catch (err) {
    (io ?? processIo(false)).err(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const out = io ?? processIo(values.json ?? false);
  const [command, ...rest] = positionals;
  if (values.help || !command || command === 'help') {
    out.out(USAGE);
    return command || values.help ? 0 : 2;
  }
  try {
    return await run(command, rest, values, out);
  } catch (err) {
    return reportFailure(command, err, out, values.debug ?? false);
  }
}

interface Options {
  to?: string | undefined;
  from?: string | undefined;
  port?: string | undefined;
  json?: boolean | undefined;
  db?: string | undefined;
  bot?: string | undefined;
  state?: string | undefined;
  status?: string | undefined;
  user?: string | undefined;
  list?: boolean | undefined;
  out?: string | undefined;
  'passphrase-env'?: string | undefined;
}

async function run(command: string, args: string[], o: Options, io: Io): Promise<number> {
  const env = o.port === undefined ? io.env : { ...io.env, PORT: o.port };
  const withEnv: Io = { ...io, env };
  switch (command) {
    case 'send':
      return (await import('./send.js')).sendCommand(args[0], o.to, withEnv);
    case 'sms':
      return (await import('./send.js')).smsCommand(args.join(' ') || undefined, o.to, withEnv);
    case 'migrate':
      return (await import('./migrate.js')).migrateCommand(withEnv);
    case 'db':
      return (await import('./db.js')).dbCommand(args, o.from, o.to, withEnv);
    case 'sandbox':
      return (await import('./sandbox.js')).sandboxCommand(withEnv);
    case 'serve':
      return (await import('./serve.js')).serveCommand(args.length ? args : ['bots'], withEnv);
    case 'simulate':
      return (await import('./serve.js')).simulateCommand(args, withEnv);
    case 'chat':
      return (await import('./chat.js')).chatCommand(args, withEnv);
    case 'check':
      return (await import('./check.js')).checkCommand(args.length ? args : ['bots'], withEnv, o.db);
    case 'agents':
      return (await import('./agents.js')).agentsCommand(args, o.db, withEnv);
    case 'conversations':
      return (await import('./conversations.js')).conversationsCommand(o, withEnv);
    case 'transcript':
      return (await import('./transcript.js')).transcriptCommand(args, o, withEnv);
    case 'graph':
      return (await import('./graph.js')).graphCommand(args, withEnv);
    case 'flows':
      return (await import('./flows.js')).flowsCommand(args, { out: o.out, passphraseEnv: o['passphrase-env'] }, withEnv);
    default:
      throw new ColloquyError('usage', `unknown command "${command}"\n\n${USAGE}`);
  }
}
