/**
 * What every part of the bench shares: the sandbox provider child, a temporary folder, the user
 * numbers handed out so far, the reply bodies the baseline forwards, and the checks made on every
 * server process (no error logged, every connection on 127.0.0.1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeAll, onExit, spawnRole, watchEgress, type Child } from './ipc.js';
import { Users, type Target } from './load.js';
import type { FlowBaselineOptions } from './flow-baseline.js';
import type { ColloquyArg, SandboxStats, ServerStats } from './roles.js';

/** The longest a server process may take to start serving. */
const START_MS = 90_000;

/** The store a Colloquy process opens. */
export type StoreSpec = ColloquyArg['store'];

/** What else a Colloquy process may be started with: its provider, whether SQLite statements are counted, its bot and more variables. */
export type ColloquyMore = Pick<ColloquyArg, 'provider' | 'countStatements' | 'bot' | 'env'>;

/** Shared state of one bench run. */
export class BenchContext {
  readonly users = new Users();
  readonly dir: string;
  readonly #children: Child[] = [];
  readonly #hosts = new Set<string>();
  readonly #lookups = new Set<string>();
  readonly #egress = watchEgress();
  readonly #removeDir: () => void;
  #sandbox: { child: Child; url: string } | undefined;
  /** The bodies Colloquy sent for a text and for a tap (from the first warm-up): what the baseline forwards. */
  replies: { onText: Record<string, unknown>; onTap: Record<string, unknown> } | undefined;

  constructor(private readonly cpuProfDir?: string | undefined) {
    this.dir = mkdtempSync(join(tmpdir(), 'colloquy-bench-'));
    const dir = this.dir;
    this.#removeDir = onExit(() => rmSync(dir, { recursive: true, force: true }));
  }

  /**
   * Node flags of a role's process: `--cpu-prof` when profiling was asked for, and for Colloquy's
   * processes the flags in BENCH_COLLOQUY_NODE_FLAGS (e.g. `--trace-gc`, `--max-old-space-size=96`).
   */
  execArgv(role: string): string[] {
    const prof = this.cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${join(this.cpuProfDir, role)}`];
    const extra = role.startsWith('colloquy') ? (process.env['BENCH_COLLOQUY_NODE_FLAGS'] ?? '').split(/\s+/).filter(Boolean) : [];
    return [...prof, ...extra];
  }

  /** The sandbox provider child, started on first use. */
  async sandbox(): Promise<{ child: Child; url: string }> {
    if (this.#sandbox === undefined) {
      const child = spawnRole('sandbox', {}, { execArgv: this.execArgv('sandbox') });
      this.#children.push(child);
      this.#sandbox = { child, url: await child.ready };
    }
    return this.#sandbox;
  }

  /**
   * Starts `n` Colloquy processes on one store (the first alone, so that it migrates; the rest at
   * once), configured for the seed provider or (`provider: 'cloud-api'`) the Cloud API, both played
   * by the sandbox.
   */
  async colloquy(name: string, store: StoreSpec, n = 1, traceStore = false, more: ColloquyMore = {}): Promise<Target> {
    const { url: sandboxUrl } = await this.sandbox();
    const start = (i: number) => {
      const arg: ColloquyArg = { sandboxUrl, store, traceStore, provider: more.provider, countStatements: more.countStatements, bot: more.bot, env: more.env };
      const child = spawnRole('colloquy', arg, { execArgv: this.execArgv(`colloquy-${name}-${i}`) });
      this.#children.push(child);
      return child;
    };
    const servers = [start(0)];
    try {
      const urls = [await servers[0]!.readyWithin(START_MS)];
      servers.push(...Array.from({ length: n - 1 }, (_, i) => start(i + 1)));
      urls.push(...(await Promise.all(servers.slice(1).map((c) => c.readyWithin(START_MS)))));
      return { name, servers, urls, provider: more.provider ?? 'seed' };
    } catch (err) {
      await closeAll(servers);
      throw err;
    }
  }

  /** Starts the bare Express relay, forwarding the replies Colloquy sent in the first warm-up. */
  async baseline(): Promise<Target> {
    const { url: sandboxUrl } = await this.sandbox();
    if (this.replies === undefined) throw new Error('the baseline needs the reply bodies of a Colloquy warm-up first');
    const child = spawnRole('baseline', { sandboxUrl, ...this.replies }, { execArgv: this.execArgv('baseline') });
    this.#children.push(child);
    return { name: 'baseline', servers: [child], urls: [await child.ready] };
  }

  /** Starts the `flows` part's bare Flow endpoint (bench/flow-baseline.ts). */
  async flowBaseline(arg: FlowBaselineOptions): Promise<Target> {
    const child = spawnRole('flow-baseline', arg, { execArgv: this.execArgv('flow-baseline') });
    this.#children.push(child);
    return { name: 'flow-baseline', servers: [child], urls: [await child.readyWithin(START_MS)] };
  }

  /** Takes the reply bodies for the baseline from what the sandbox accepted so far. */
  async learnReplies(): Promise<void> {
    if (this.replies !== undefined) return;
    const { templates } = await (await this.sandbox()).child.call<SandboxStats>('stats');
    const onText = templates['list'];
    const onTap = templates['buttons'];
    if (onText === undefined || onTap === undefined) throw new Error(`the warm-up did not produce a list and a buttons message: ${Object.keys(templates).join(', ')}`);
    this.replies = { onText, onTap };
  }

  /**
   * Reads each server's stats and checks them: no error logged (warnings are counted), no failed turn (or
   * exactly `turns` turns in all when given), every connection on 127.0.0.1.
   */
  async check(target: Target, turns?: number): Promise<ServerStats[]> {
    const stats = await Promise.all(target.servers.map((s) => s.call<ServerStats>('stats')));
    const ok = stats.reduce((n, s) => n + s.turnsOk, 0);
    for (const [i, s] of stats.entries()) {
      const who = `${target.name}#${i}`;
      if (s.turnsError !== 0) throw new Error(`${who}: ${s.turnsError} turns or requests failed: ${s.logged.join(' | ')}`);
      // Warnings (a busy database answered 503 and delivered again) are reported, not failures.
      if (s.errors !== 0) throw new Error(`${who} logged ${s.errors} errors and ${s.warnings} warnings: ${s.logged.join(' | ')}`);
      this.#note(s.egress);
    }
    if (turns !== undefined && ok !== turns) throw new Error(`${target.name} ran ${ok} turns, expected ${turns}`);
    return stats;
  }

  /** Stops a target's processes. */
  async stop(target: Target): Promise<void> {
    await closeAll(target.servers);
  }

  /** Checks the sandbox saw no refusal and no message to an unknown user, and that nothing left 127.0.0.1; returns its stats. */
  async finalCheck(): Promise<{ sandbox: SandboxStats; hosts: string[] }> {
    const sandbox = await (await this.sandbox()).child.call<SandboxStats>('stats');
    if (sandbox.refused !== 0 || sandbox.stray !== 0) throw new Error(`the sandbox refused ${sandbox.refused} requests and saw ${sandbox.stray} unexpected messages: ${sandbox.refusals.join(' | ')}`);
    this.#note(sandbox.egress);
    this.#note(this.#egress());
    const hosts = [...this.#hosts].sort();
    if (hosts.some((h) => h !== '127.0.0.1') || this.#lookups.size > 0) throw new Error(`a connection went elsewhere than 127.0.0.1: ${hosts.join(', ')} ${[...this.#lookups].join(', ')}`);
    return { sandbox, hosts };
  }

  /** Stops every child of the run and removes the temporary folder. */
  async close(): Promise<void> {
    await closeAll(this.#children);
    rmSync(this.dir, { recursive: true, force: true });
    this.#removeDir();
  }

  #note(e: { hosts: string[]; lookups: string[] }): void {
    for (const h of e.hosts) this.#hosts.add(h);
    for (const l of e.lookups) this.#lookups.add(l);
  }
}
