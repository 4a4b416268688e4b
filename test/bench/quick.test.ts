/**
 * The bench harness works: `bench/run.ts --quick` starts every part (real child processes, the
 * sandbox, the relay, SQLite files, a throwaway PostgreSQL when the machine has one, the Flow
 * endpoint walked by WhatsApp's side of live flows), ends with one
 * JSON line carrying every key the README documents, and leaves no process, server or temporary
 * folder behind. No timing, rate or ratio is asserted: speed belongs to `npm run bench`.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { postgresUnavailable } from '../../bench/postgres.js';
import { eventually } from '../support/eventually.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function runQuick(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--quick'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGINT'), 400_000); // the bench's own Ctrl-C cleanup
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const refused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });

const benchDirs = () => new Set(readdirSync(tmpdir()).filter((d) => d.startsWith('colloquy-bench-')));

type Json = Record<string, unknown>;
const isNum = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
/** A figure, or (for PostgreSQL) the reason it was skipped. */
const figureOrSkipped = (x: unknown, key: string) => {
  const o = x as Json;
  if (typeof o['skipped'] === 'string') return;
  expect(o, JSON.stringify(o)).not.toHaveProperty('error');
  expect(isNum(o[key]), `${key} in ${JSON.stringify(o)}`).toBe(true);
};

describe('npm run bench -- --quick', () => {
  it('runs every part, ends with one JSON line of every figure, and leaves nothing running', async () => {
    const before = benchDirs();
    const { code, stdout, stderr } = await runQuick();
    const lines = stdout.trim().split('\n');
    const last = lines[lines.length - 1]!;
    expect(code, stderr.slice(-3000)).toBe(0);
    const j = JSON.parse(last) as Record<string, Json>;

    expect(j['ok']).toBe(true);
    expect(j['mode']).toBe('quick');
    for (const k of ['adapter_msgs_per_s', 'baseline_msgs_per_s', 'ratio']) expect(isNum(j['transport']![k]), k).toBe(true);
    for (const k of [
      'colloquy_turns_per_s',
      'baseline_req_per_s',
      'ratio',
      'colloquy_turn_p50_ms',
      'colloquy_turn_p99_ms',
      'colloquy_webhook_p99_ms',
      'colloquy_peak_rss_mb',
      'baseline_peak_rss_mb',
      'sandbox_peak_rss_mb',
      'load_avg_1m',
    ]) {
      expect(isNum(j['e2e']![k]), `e2e.${k}`).toBe(true);
    }
    expect(j['e2e']!['outbound_hosts']).toEqual(['127.0.0.1']);

    // Live flows: every action's latency on both sides and their ratio, Colloquy's CPU and statements per request.
    const flows = j['flows']!;
    expect(flows, JSON.stringify(flows)).not.toHaveProperty('error');
    for (const action of ['init', 'read', 'submit', 'replay']) {
      const a = (flows['actions'] as Record<string, Json>)[action]!;
      for (const k of ['colloquy_p50_ms', 'colloquy_p90_ms', 'baseline_p50_ms', 'baseline_p90_ms', 'p50_ratio', 'cpu_ms_per_request', 'baseline_cpu_ms_per_request', 'statements_per_request']) {
        expect(isNum(a[k]), `flows.actions.${action}.${k}`).toBe(true);
      }
      expect(a['requests']).toBe(40);
    }
    for (const k of ['colloquy_cpu_ms_per_request', 'baseline_cpu_ms_per_request', 'cpu_ratio', 'statements_per_request']) expect(isNum(flows[k]), `flows.${k}`).toBe(true);
    for (const w of ['write', 'nfm_reply']) expect(isNum(((flows['webhooks'] as Json)[w] as Json)['statements_per_message']), `flows.webhooks.${w}`).toBe(true);
    // 10 warm-up users and 40 measured: each opened, read, submitted and replayed once, and was booked once.
    expect(flows['checks']).toEqual({ flows_walked: 50, flow_requests: { 'INIT:ok': 50, 'data_exchange:ok': 100, 'data_exchange:replayed': 50 }, bookings_once: 50, replays_identical: 50 });

    const open = j['open_loop']!;
    expect(open['rates']).toEqual([200, 500, 1000]);
    expect(open['warmup_seconds']).toBe(0.2);
    for (const side of ['colloquy', 'baseline']) {
      const s = open[side] as Json;
      expect(isNum(s['peak_rss_mb']), side).toBe(true);
      // Each side is warmed up at 200/s before its first measured rate; that phase is reported apart.
      expect(s['warmup']).toMatchObject({ rate: 200, seconds: 0.2, sent: 40 });
      expect(isNum((s['warmup'] as Json)['ack_p99_ms']), `${side} warmup`).toBe(true);
      for (const rate of ['200', '500', '1000']) {
        const r = s[rate] as Json;
        for (const k of ['ack_p50_ms', 'ack_p99_ms', 'reply_p50_ms', 'reply_p99_ms', 'event_loop_delay_p99_ms', 'achieved_per_s']) expect(isNum(r[k]), `${side} ${rate} ${k}`).toBe(true);
        expect(r['sent']).toBe(Number(rate) / 2);
        for (const k of ['failed', 'unanswered', 'missing_replies']) expect(Number.isInteger(r[k]), `${side} ${rate} ${k}`).toBe(true);
      }
    }
    const pgOpen = open['colloquy_postgres'] as Json;
    if (typeof pgOpen['skipped'] !== 'string') figureOrSkipped(pgOpen['500'], 'reply_p99_ms');

    const stores = j['stores']!;
    expect(Object.keys(stores['turns_per_s'] as Json)).toEqual(['sqlite_1', 'sqlite_2', 'postgres_1', 'postgres_2']);
    for (const key of ['sqlite_1', 'sqlite_2']) {
      const c = stores[key] as Json;
      expect(c['skipped'], key).toBeUndefined();
      figureOrSkipped(c, 'turns_per_s');
      expect((c['peak_rss_mb'] as number[]).length).toBe(c['processes']);
    }
    for (const key of ['postgres_1', 'postgres_2']) figureOrSkipped(stores[key], 'turns_per_s');
    expect(isNum(stores['baseline_req_per_s'])).toBe(true);
    expect(isNum((stores['sqlite_1'] as Json)['ratio_to_baseline'])).toBe(true);

    const goals = j['goals']!;
    expect(Object.keys(goals)).toEqual([
      'ratio_sqlite',
      'ratio_postgres',
      'ack_p99_ms_at_500_sqlite',
      'reply_p99_ms_at_500_sqlite',
      'ack_p99_ms_at_500_postgres',
      'reply_p99_ms_at_500_postgres',
      'colloquy_peak_rss_mb',
      'million_turn_p50_ratio',
      'million_turn_p99_ratio',
    ]);
    for (const g of Object.values(goals) as Json[]) expect(g['met'] === null || typeof g['met'] === 'boolean').toBe(true);
    expect((goals['ratio_sqlite'] as Json)['value']).toBe(j['e2e']!['ratio']);

    const million = j['million']!;
    for (const k of ['ratio_turn_p50', 'ratio_turn_p99']) expect(isNum(million[k]), k).toBe(true);
    expect((million['small'] as Json)['conversations']).toBe(500);
    expect((million['large'] as Json)['conversations']).toBe(5000);
    expect((million['large'] as Json)['rows']).toMatchObject({ conversations: 5000, inbox: 10_000, outbox: 10_000 });

    expect(j['sandbox']).toMatchObject({ stray_messages: 0 });
    expect((j['load_avg']!['start'] as number[]).length).toBe(3);
    expect(j['machine']!['cpus']).toBeGreaterThan(0);

    // Nothing left behind: every child gone, PostgreSQL stopped, temporary folders removed.
    const pids = j['child_pids'] as unknown as number[];
    expect(pids.length).toBeGreaterThan(3);
    expect(pids.filter(alive)).toEqual([]);
    const pg = j['postgres']!;
    if (typeof pg['port'] === 'number') expect(await refused(pg['port'])).toBe(true);
    const left = [...benchDirs()].filter((d) => !before.has(d));
    expect(left).toEqual([]);
  }, 420_000);

  it.skipIf(postgresUnavailable() !== undefined)(
    'stops every child and PostgreSQL and removes its folders on Ctrl-C',
    async () => {
      const before = benchDirs();
      // A process group of its own, signalled as a terminal's Ctrl-C signals the foreground group.
      const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--quick', '--only=stores'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      child.stdout.resume();
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const pgDir = () => [...benchDirs()].find((d) => !before.has(d) && d.startsWith('colloquy-bench-pg-'));
      const dir = await eventually(() => pgDir() ?? false, { what: "the bench's PostgreSQL folder", timeoutMs: 120_000, intervalMs: 100 });
      await new Promise((r) => setTimeout(r, 3_000)); // the Colloquy processes are starting or running
      process.kill(-child.pid!, 'SIGINT');
      await exited;
      expect(stderr).toContain('bench: SIGINT, stopping every child process and PostgreSQL');
      // Every process of the group, and the PostgreSQL server, gone (a zombie awaiting its reaper is not running).
      const ps = execFileSync('ps', ['-eo', 'pgid=,stat=,args='], { encoding: 'utf8' });
      const running = ps.split('\n').filter((l) => {
        const [pgid, stat] = l.trim().split(/\s+/);
        return !stat?.startsWith('Z') && (pgid === String(child.pid) || l.includes(dir));
      });
      expect(running).toEqual([]);
      expect([...benchDirs()].filter((d) => !before.has(d))).toEqual([]);
    },
    180_000,
  );
});
