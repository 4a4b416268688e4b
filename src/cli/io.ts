/** What a command reads and writes, injectable for tests. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Machine-readable output (`--json`). */
  readonly json: boolean;
}

/** The process's own streams and environment. */
export function processIo(json: boolean): Io {
  return { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t), env: process.env, json };
}
