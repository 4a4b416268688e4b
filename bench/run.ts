/**
 * `npm run bench`: runs the benchmarks, prints a summary, and ends with one JSON line of all figures:
 * `{"transport":{…},"e2e":{…}}`.
 *
 * Environment (all optional): BENCH_E2E_USERS (default 2000), BENCH_E2E_ROUNDS (2),
 * BENCH_E2E_CONCURRENCY (32), BENCH_E2E_WARMUP (200), BENCH_CPU_PROF=<folder> (the Colloquy, baseline
 * and sandbox processes write V8 CPU profiles to <folder>/<role>/), BENCH_E2E_TRACE_STORE=1 (time
 * every store method in Colloquy's process; reported as `colloquy_store_ms`).
 */
import { benchE2e, watchEgress } from './e2e.js';
import { benchTransport } from './transport.js';

const started = Date.now();
const egress = watchEgress();
const num = (name: string): number | undefined => {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${name} must be a positive whole number, got "${v}"`);
  return Number(v);
};

const transport = await benchTransport();
const transportHosts = egress().hosts;
if (transportHosts.some((h) => h !== '127.0.0.1')) throw new Error(`the transport bench connected elsewhere than 127.0.0.1: ${transportHosts.join(', ')}`);

console.log('Transport (interactive sends to a local provider on 127.0.0.1)');
console.log(`  adapter   ${transport['adapter_msgs_per_s']} msgs/s`);
console.log(`  baseline  ${transport['baseline_msgs_per_s']} msgs/s  (bare undici POST loop, token fetched once)`);
console.log(`  ratio     ${transport['ratio']}  (adapter ÷ baseline)`);
console.log(`  token requests by the adapter: ${transport['adapter_token_requests']}`);
console.log(`  ${transport['messages_per_run']} messages per run, best of ${transport['rounds']}, concurrency ${transport['concurrency']}, ${transport['connections']} connections`);
console.log(`  took ${((Date.now() - started) / 1000).toFixed(1)} s`);

const e2eStarted = Date.now();
const e2e = await benchE2e({
  users: num('BENCH_E2E_USERS'),
  rounds: num('BENCH_E2E_ROUNDS'),
  concurrency: num('BENCH_E2E_CONCURRENCY'),
  warmupUsers: num('BENCH_E2E_WARMUP'),
  cpuProfDir: process.env['BENCH_CPU_PROF'] || undefined,
  traceStore: process.env['BENCH_E2E_TRACE_STORE'] === '1',
});
const f = (k: string): string => String(e2e[k]);
console.log('');
console.log('End to end (signed webhook → commit → turn → outbound accepted by the sandbox; all on 127.0.0.1)');
console.log(`  Colloquy  ${f('colloquy_turns_per_s')} turns/s  (new conversation ${f('colloquy_new_turns_per_s')}, existing ${f('colloquy_existing_turns_per_s')}; rounds ${JSON.stringify(e2e['colloquy_turns_per_s_rounds'])})`);
console.log(`  baseline  ${f('baseline_req_per_s')} req/s    (new ${f('baseline_new_req_per_s')}, existing ${f('baseline_existing_req_per_s')}; rounds ${JSON.stringify(e2e['baseline_req_per_s_rounds'])}; bare Express: HMAC + JSON.parse + one undici POST)`);
console.log(`  ratio     ${f('ratio')}  (Colloquy ÷ baseline; new ${f('ratio_new')}, existing ${f('ratio_existing')})`);
console.log(`  webhook answer  Colloquy p50 ${f('colloquy_webhook_p50_ms')} ms, p99 ${f('colloquy_webhook_p99_ms')} ms (${f('colloquy_webhook_answers_per_s')} answers/s) · baseline p50 ${f('baseline_webhook_p50_ms')} ms, p99 ${f('baseline_webhook_p99_ms')} ms`);
console.log(`  message in → reply accepted  Colloquy p50 ${f('colloquy_turn_p50_ms')} ms, p99 ${f('colloquy_turn_p99_ms')} ms · baseline p50 ${f('baseline_turn_p50_ms')} ms, p99 ${f('baseline_turn_p99_ms')} ms`);
console.log(`  Colloquy sends still draining after the last webhook answer: ${f('colloquy_send_drain_ms')} ms per round`);
console.log(`  token requests by Colloquy for the whole run: ${f('colloquy_token_requests')} · SQLite journal: ${f('sqlite_journal_mode')} · outbound hosts: ${(e2e['outbound_hosts'] as string[]).join(', ')}`);
console.log(`  peak RSS  Colloquy ${f('colloquy_peak_rss_mb')} MB · baseline ${f('baseline_peak_rss_mb')} MB · sandbox ${f('sandbox_peak_rss_mb')} MB · bench ${f('bench_peak_rss_mb')} MB`);
console.log(`  ${f('users')} users × 2 turns per round, best of ${f('rounds')} (alternated), ${f('warmup_users')}-user warm-up each, ${f('concurrency')} webhooks in flight; 1-min load average ${f('load_avg_1m')}`);
console.log(`  took ${((Date.now() - e2eStarted) / 1000).toFixed(1)} s; total ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(JSON.stringify({ transport, e2e }));
