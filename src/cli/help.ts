/**
 * `colloquy --help`. The environment part is written from the variables' declarations
 * (src/env.ts), so the help, loadConfig() and the configuration reference name the same variables
 * with the same defaults.
 */
import { describeDefault, ENV_VARS } from '../env.js';

const COMMANDS = `Usage: colloquy <command> [options]

Commands:
  serve [bot files or folders…]   webhook server for the bots (default ./bots); with no
                                  COLLOQUY_BASE_URL it runs the sandbox provider and the web simulator
  chat <bot file>                 chat with a bot in the terminal
  simulate <bot file>             the web simulator for one bot
  check [bot files or folders…] [--db <file or url>]
                                  verify bots without running a server (exit 1 on any finding);
                                  with --db, also the live conversations of that database these
                                  bot files would strand (a state no served version or migration has)
  conversations [--bot B] [--state S] [--status S] [--user N] [--list] [--db <file or url>]
                                  conversations counted by bot, version, status and state
                                  (or listed one a line with --list)
  agents add NAME | list | remove NAME | rotate NAME [--db <file or url>]
                                  the agents of the agents' API and inbox: add and rotate print
                                  a new token once; remove ends its sessions and puts its claims
                                  back in the queue
  transcript <conversation id> [--db <file or url>]
                                  a conversation in order, both directions, with delivery results
  graph <bot file>                the conversation as a Mermaid state diagram
  send --to <number> <message.json>   send one interactive message through the real adapter
  sms --to <number> <text>        send one SMS through the real adapter
  migrate                         apply pending database migrations (COLLOQUY_DATABASE_URL)
  db copy --from <file> --to <url>   copy a SQLite database into an empty PostgreSQL one
  sandbox [--port N]              run the sandbox provider on its own
  flows keygen [--out DIR] [--passphrase-env NAME]
                                  write a 2048-bit key pair for the WhatsApp Flow endpoint (the
                                  private key encrypted under the passphrase in NAME, default
                                  COLLOQUY_FLOW_PRIVATE_KEY_PASSPHRASE) and say how to upload it

Options:
  --port <n>    port for serve, simulate and sandbox (default PORT or 3000)
  --db <file or url>
                the database check, conversations and transcript read, without changing
                it, and agents changes: a SQLite file or a postgres:// URL (default
                COLLOQUY_DATABASE_URL, else COLLOQUY_DB, else ./data/colloquy.db)
  --json        machine-readable output (send, sms, check, conversations, transcript, agents, flows keygen)
  --debug       on a failure, the stack trace after the message
  -h, --help    this help

`;

/** The environment variables, one a line with its default. */
function environment(): string {
  const width = Math.max(...ENV_VARS.map((v) => v.name.length)) + 2;
  const lines = ENV_VARS.map((v) => `  ${v.name.padEnd(width)}${v.default === undefined ? 'unset: ' : 'default: '}${describeDefault(v)}`);
  return `Environment (all optional; docs/reference/configuration.md says what each one means and takes):\n${lines.join('\n')}\n`;
}

/** The whole help text. */
export const USAGE = `${COMMANDS}${environment()}`;
