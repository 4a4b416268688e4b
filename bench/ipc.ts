/**
 * The bench's child processes: each server (Colloquy, the relay baseline, the sandbox provider)
 * runs in a child forked from `bench/roles.ts` and answers calls over IPC. Every child (and every
 * cleanup the bench registers, such as stopping PostgreSQL) is tracked here so that an error, a
 * Ctrl-C or a plain exit never leaves a process behind.
 */
import { readFileSync } from 'node:fs';
import { fork, type ChildProcess } from 'node:child_process';
import dc from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The repository's root: children run there so that `--import tsx` and `colloquy` resolve.
const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const ROLES = join(ROOT, 'bench', 'roles.ts');

/** The webhook secret every server of the bench checks. */
export const SECRET = 'bench-webhook-secret';
/** The sending number of Colloquy's config (the sandbox echoes it in replies' contexts). */
export const SENDER = '15550000001';

/** A call from the orchestrator to a child. */
export interface Call {
  readonly id: number;
  readonly cmd: string;
  readonly arg?: unknown;
}
/** A child's answer to a {@link Call}. */
export interface Answer {
  readonly id: number;
  readonly ok: boolean;
  readonly result?: unknown;
  readonly error?: string;
}
/** A child's first message: it serves at `url`. */
export interface Ready {
  readonly ready: true;
  readonly url: string;
}
/** A child's first message when it could not start (the orchestrator decides whether that is fatal). */
export interface Failed {
  readonly failed: true;
  readonly error: string;
}

/** Thrown by {@link Child.ready} when the child reported it could not start. */
export class StartFailed extends Error {}

/** Every child alive, for the exit and signal handlers. */
const alive = new Set<ChildProcess>();
/** Synchronous cleanups run on exit (in reverse order of registration); each is removed once done. */
const cleanups = new Map<number, () => void>();
let nextCleanup = 1;

/** A child process serving IPC calls. */
export class Child {
  #next = 1;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  readonly #exited: Promise<number | null>;
  /** The child's URL once it serves; rejects with {@link StartFailed} or when it exits first. */
  readonly ready: Promise<string>;

  constructor(
    readonly name: string,
    readonly proc: ChildProcess,
  ) {
    let onReady: (url: string) => void = () => undefined;
    let failReady: (e: Error) => void = () => undefined;
    this.ready = new Promise((resolve, reject) => {
      onReady = resolve;
      failReady = reject;
    });
    this.ready.catch(() => undefined); // observed by whoever awaits it
    proc.on('message', (m: Answer | Ready | Failed) => {
      if ('ready' in m) {
        onReady(m.url);
        return;
      }
      if ('failed' in m) {
        failReady(new StartFailed(m.error));
        return;
      }
      const p = this.#pending.get(m.id);
      if (!p) return;
      this.#pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(`${name}: ${m.error ?? 'failed'}`));
    });
    // Without a listener, an 'error' (a fork that failed, a signal that could not be sent) would
    // crash the orchestrator before its own cleanup could stop the rest; IPC write failures go to
    // the send callback in `call` instead.
    proc.on('error', (err) => failReady(new Error(`${name}: ${err.message}`)));
    this.#exited = new Promise((resolve) =>
      proc.once('exit', (code, signal) => {
        alive.delete(proc);
        const e = new Error(`${name} exited (${signal ?? code})`);
        failReady(e);
        for (const p of this.#pending.values()) p.reject(e);
        this.#pending.clear();
        resolve(code);
      }),
    );
  }

  /** {@link ready}, or a {@link StartFailed} after `ms` (a store that never connects must not hang the bench). */
  async readyWithin(ms: number): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StartFailed(`${this.name} did not start within ${Math.round(ms / 1000)} s`)), ms);
    });
    try {
      return await Promise.race([this.ready, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The child's process id. */
  get pid(): number {
    return this.proc.pid ?? -1;
  }

  /** Calls `cmd` in the child; rejects after `timeoutMs`. */
  call<T>(cmd: string, arg?: unknown, timeoutMs = 120_000): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      if (!this.proc.connected) {
        reject(new Error(`${this.name}: not running (${cmd})`));
        return;
      }
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${this.name}: ${cmd} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      // A child that died a moment ago (a Ctrl-C signals the whole process group) may still look
      // connected: the write then fails with EPIPE, reported here rather than as an 'error' event.
      this.proc.send({ id, cmd, arg } satisfies Call, (err) => {
        if (err === null || !this.#pending.has(id)) return;
        this.#pending.get(id)!.reject(new Error(`${this.name}: ${cmd} could not be sent (${err.message})`));
        this.#pending.delete(id);
      });
    });
  }

  /** Asks the child to close and waits for it to exit (kills it after 10 s). */
  async close(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    await this.call('close', undefined, 10_000).catch(() => undefined);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10_000);
    await this.#exited;
    clearTimeout(timer);
  }
}

/** The process ids of every child started by this process (alive or not), for the harness test. */
export const startedPids: number[] = [];

/**
 * Forks `bench/roles.ts` as `role` with its argument.
 * Children run with `--conditions=colloquy-source --import tsx` so that a bot's `import … from 'colloquy'`
 * resolves to src/ (like `npm start`), not to a possibly stale dist/.
 */
export function spawnRole(role: string, arg: unknown, opts: { execArgv?: readonly string[] } = {}): Child {
  const proc = fork(ROLES, [role, JSON.stringify(arg)], {
    cwd: ROOT,
    execArgv: ['--conditions=colloquy-source', '--import', 'tsx', ...(opts.execArgv ?? [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  alive.add(proc);
  if (proc.pid !== undefined) startedPids.push(proc.pid);
  return new Child(role, proc);
}

/** Closes children in reverse order of start, each at most ~20 s. */
export async function closeAll(children: readonly Child[]): Promise<void> {
  for (const child of [...children].reverse()) await child.close();
}

/** Registers a synchronous cleanup run on exit, error or signal; returns its remover. */
export function onExit(fn: () => void): () => void {
  const id = nextCleanup++;
  cleanups.set(id, fn);
  return () => {
    cleanups.delete(id);
  };
}

/** Kills every child still alive and runs every registered cleanup, synchronously. */
export function cleanupNow(): void {
  for (const proc of alive) {
    try {
      proc.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
  alive.clear();
  for (const [id, fn] of [...cleanups.entries()].reverse()) {
    cleanups.delete(id);
    try {
      fn();
    } catch {
      /* keep cleaning */
    }
  }
}

/** Installs the exit and signal handlers (once, in the orchestrator). */
export function installCleanup(): void {
  process.once('exit', cleanupNow);
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    // `on`, not `once`: a repeated signal (a second Ctrl-C) must not kill the process halfway
    // through its cleanup. The cleanup is synchronous (pg_ctl stop), so it starts after a short
    // pause that lets a launcher's signal acknowledgement go out: tsx's CLI SIGKILLs a child that
    // does not acknowledge within ~30 ms, which is why `npm run bench` runs node directly.
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`\nbench: ${signal}, stopping every child process and PostgreSQL\n`);
      setTimeout(() => {
        cleanupNow();
        process.exit(130);
      }, 100);
    });
  }
}

/** Serves the orchestrator's calls in a child. */
export function serveCalls(handlers: Record<string, (arg: never) => unknown>): void {
  process.on('message', (m: Call) => {
    void (async () => {
      try {
        const h = handlers[m.cmd];
        if (h === undefined) throw new Error(`unknown command "${m.cmd}"`);
        const result = await h(m.arg as never);
        process.send!({ id: m.id, ok: true, result } satisfies Answer);
      } catch (err) {
        process.send!({ id: m.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies Answer);
      }
    })();
  });
}

/**
 * This process's peak resident set size, MB: Linux's `VmHWM`, the high-water mark of this program's
 * own memory. Not `resourceUsage().maxRSS`: Linux carries a forked child's pre-exec copy of its
 * parent into it, so a child forked by a 300 MB bench process reports at least ~300 MB whatever it
 * used itself. Other systems fall back to maxRSS.
 */
export function peakRssMb(): number {
  try {
    const hwm = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Math.round(Number(hwm[1]) / 1024);
  } catch {
    // not Linux
  }
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

/** Records where every client socket of this thread connects; returns a reader. */
export function watchEgress(): () => { hosts: string[]; lookups: string[] } {
  const hosts = new Set<string>();
  const lookups = new Set<string>();
  dc.subscribe('net.client.socket', (message) => {
    const socket = (message as { socket: Socket }).socket;
    socket.once('lookup', (_err: Error | null, address: string, _family: unknown, host: string) => {
      lookups.add(`${host}→${address}`);
    });
    socket.once('connect', () => {
      hosts.add(socket.remoteAddress ?? '?');
    });
  });
  return () => ({ hosts: [...hosts].sort(), lookups: [...lookups].sort() });
}
