/**
 * How a command's failure reaches the person who ran it: one sentence on stderr, `colloquy
 * <command>: …`, and an exit code (2 for a usage error, else 1). A stack trace only with `--debug`.
 */
import { ColloquyError } from '../errors.js';
import type { Io } from './io.js';

/** Prints `err` for `command` and answers the exit code. */
export function reportFailure(command: string, err: unknown, io: Io, debug: boolean): number {
  io.err(`colloquy ${command}: ${sentenceOf(err)}\n`);
  if (debug) io.err(`${stackOf(err)}\n`);
  return err instanceof ColloquyError && err.code === 'usage' ? 2 : 1;
}

/** The message to print: Colloquy's own errors and the system's (a port in use…) say what is wrong. */
function sentenceOf(err: unknown): string {
  if (err instanceof ColloquyError) return err.message;
  const e = err as { syscall?: unknown; message?: unknown } | undefined;
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message : String(err);
  if (typeof e?.syscall === 'string') return message;
  // Not an error we expected: still one line, with where to look.
  return `unexpected failure: ${firstLine(message)} (run again with --debug to see where it happened)`;
}

/** The stack, with the causes' stacks after it. */
function stackOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    parts.push(e instanceof Error ? (e.stack ?? e.message) : String(e));
  }
  return parts.join('\ncaused by: ');
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
