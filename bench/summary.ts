/**
 * The human-readable summary `npm run bench` prints after each part (the JSON line carries the same
 * figures and more).
 */
type Figures = Record<string, unknown>;

const v = (x: unknown): string => (x === undefined || x === null ? '–' : typeof x === 'object' ? JSON.stringify(x) : String(x));

/** Prints the summary of one part. */
export function printSummary(part: string, f: Figures, seconds: number): void {
  const lines = f['skipped'] !== undefined ? [`  skipped: ${v(f['skipped'])}`] : f['error'] !== undefined ? [`  FAILED: ${v(f['error'])}`] : (PRINTERS[part]?.(f) ?? []);
  console.log('');
  console.log(`${TITLES[part] ?? part}  (${seconds.toFixed(1)} s)`);
  for (const line of lines) console.log(line);
}

const TITLES: Record<string, string> = {
  transport: 'Transport (interactive sends to a local provider on 127.0.0.1)',
  e2e: 'End to end, closed loop (signed webhook → commit → turn → outbound accepted by the sandbox; all on 127.0.0.1)',
  flows: 'Live flows (POST /flows answered from the conversation, beside a bare decrypt-and-answer endpoint)',
  open_loop: 'Open loop at fixed rates (new users, evenly spaced)',
  stores: 'Stores and processes, closed loop (random routing across processes)',
  million: 'Many stored conversations (turn latency, large store ÷ small store)',
};

/** The closed loop's Cloud API side, beside the seed provider's. */
function cloudApi(k: Figures): string[] {
  return [
    `  Cloud API ${v(k['turns_per_s'])} turns/s  (rounds ${v(k['turns_per_s_rounds'])}; ÷ baseline ${v(k['ratio'])}, ÷ seed provider ${v(k['ratio_to_seed'])}) · message in → reply accepted p50 ${v(k['turn_p50_ms'])} ms, p99 ${v(k['turn_p99_ms'])} ms`,
    `  per message  Cloud API CPU ${v(k['cpu_ms_per_message'])} ms (the sandbox's ${v(k['provider_cpu_ms_per_message'])} ms) · ${v(k['statements_per_message'])} statements (${v(k['extra_statements_per_message'])} more) · ${v(k['provider_calls_per_message'])} provider calls (${v(k['provider_messages_per_message'])} messages + ${v(k['read_receipts_per_message'])} read receipts) · peak RSS ${v(k['peak_rss_mb'])} MB`,
  ];
}

const PRINTERS: Record<string, (f: Figures) => string[]> = {
  transport: (f) => [
    `  adapter   ${v(f['adapter_msgs_per_s'])} msgs/s`,
    `  baseline  ${v(f['baseline_msgs_per_s'])} msgs/s  (bare undici POST loop, token fetched once)`,
    `  ratio     ${v(f['ratio'])}  (adapter ÷ baseline); token requests by the adapter: ${v(f['adapter_token_requests'])}`,
  ],
  e2e: (f) => [
    `  Colloquy  ${v(f['colloquy_turns_per_s'])} turns/s  (new conversation ${v(f['colloquy_new_turns_per_s'])}, existing ${v(f['colloquy_existing_turns_per_s'])}; rounds ${v(f['colloquy_turns_per_s_rounds'])})`,
    `  baseline  ${v(f['baseline_req_per_s'])} req/s    (rounds ${v(f['baseline_req_per_s_rounds'])}; bare Express: HMAC + JSON.parse + one undici POST)`,
    `  ratio     ${v(f['ratio'])}  (Colloquy ÷ baseline; new ${v(f['ratio_new'])}, existing ${v(f['ratio_existing'])})`,
    `  webhook answer  Colloquy p50 ${v(f['colloquy_webhook_p50_ms'])} ms, p99 ${v(f['colloquy_webhook_p99_ms'])} ms · baseline p50 ${v(f['baseline_webhook_p50_ms'])} ms, p99 ${v(f['baseline_webhook_p99_ms'])} ms`,
    `  message in → reply accepted  Colloquy p50 ${v(f['colloquy_turn_p50_ms'])} ms, p99 ${v(f['colloquy_turn_p99_ms'])} ms · baseline p50 ${v(f['baseline_turn_p50_ms'])} ms, p99 ${v(f['baseline_turn_p99_ms'])} ms`,
    `  per message  Colloquy CPU ${v(f['colloquy_cpu_ms_per_message'])} ms (the sandbox's ${v(f['colloquy_provider_cpu_ms_per_message'])} ms) · ${v(f['colloquy_statements_per_message'])} statements · ${v(f['colloquy_provider_calls_per_message'])} provider calls`,
    `  peak RSS  Colloquy ${v(f['colloquy_peak_rss_mb'])} MB · baseline ${v(f['baseline_peak_rss_mb'])} MB`,
    ...cloudApi((f['cloud_api'] ?? {}) as Figures),
    `  ${v(f['users'])} users × 2 turns per round, best of ${v(f['rounds'])} (alternated), ${v(f['concurrency'])} webhooks in flight`,
  ],
  flows: (f) => {
    const actions = (f['actions'] ?? {}) as Record<string, Figures>;
    const out = ['  action   Colloquy p50 / p90 ms · baseline p50 / p90 ms · p50 ratio · Colloquy CPU ms · statements (framing) per request'];
    for (const [name, a] of Object.entries(actions))
      out.push(
        `  ${name.padEnd(8)} ${v(a['colloquy_p50_ms'])} / ${v(a['colloquy_p90_ms'])} · ${v(a['baseline_p50_ms'])} / ${v(a['baseline_p90_ms'])} · ${v(a['p50_ratio'])} · ${v(a['cpu_ms_per_request'])} (baseline ${v(a['baseline_cpu_ms_per_request'])}) · ${v(a['statements_per_request'])} (${v(a['framing_statements_per_request'])})`,
      );
    const w = (f['webhooks'] ?? {}) as Record<string, Figures>;
    out.push(
      `  per Flow request  Colloquy CPU ${v(f['colloquy_cpu_ms_per_request'])} ms, baseline ${v(f['baseline_cpu_ms_per_request'])} ms (ratio ${v(f['cpu_ratio'])}) · ${v(f['statements_per_request'])} statements`,
    );
    out.push(
      `  webhooks  write: CPU ${v(w['write']?.['cpu_ms_per_message'])} ms, ${v(w['write']?.['statements_per_message'])} statements · nfm_reply: CPU ${v(w['nfm_reply']?.['cpu_ms_per_message'])} ms, ${v(w['nfm_reply']?.['statements_per_message'])} statements`,
    );
    out.push(`  ${v(f['users'])} users per round, ${v(f['rounds'])} rounds alternated, ${v(f['concurrency'])} in flight · checks ${v(f['checks'])}`);
    return out;
  },
  open_loop: (f) => {
    const rates = (f['rates'] as number[] | undefined) ?? [];
    const out = [`  ${v(f['seconds_per_rate'])} s per rate; ms from each webhook's scheduled time; event-loop delay p99 inside the server`];
    for (const side of ['colloquy', 'baseline', 'colloquy_postgres']) {
      const s = (f[side] ?? {}) as Figures;
      if (s['skipped'] !== undefined) {
        out.push(`  ${side.padEnd(17)} skipped: ${v(s['skipped'])}`);
        continue;
      }
      const w = s['warmup'] as Figures | undefined;
      if (w !== undefined) {
        out.push(`  ${side.padEnd(17)} warm-up ${v(w['seconds'])} s at ${v(w['rate'])}/s, not counted: ack p99 ${v(w['ack_p99_ms'])} · reply p99 ${v(w['reply_p99_ms'])}`);
      }
      for (const rate of rates) {
        const r = s[String(rate)] as Figures | undefined;
        if (r === undefined) continue;
        out.push(
          `  ${side.padEnd(17)} ${String(rate).padStart(5)}/s  ack p50 ${v(r['ack_p50_ms'])} p99 ${v(r['ack_p99_ms'])} · reply p50 ${v(r['reply_p50_ms'])} p99 ${v(r['reply_p99_ms'])} · loop delay p99 ${v(r['event_loop_delay_p99_ms'])} · failed ${v(r['failed'])}, missing ${v(r['missing_replies'])}${r['cpu_ms_per_message'] === undefined ? '' : ` · CPU ${v(r['cpu_ms_per_message'])} ms/message`}${r['statements_per_message'] === undefined ? '' : ` · ${v(r['statements_per_message'])} statements/message`}`,
        );
      }
      if (s['error'] !== undefined) out.push(`  ${side.padEnd(17)} ERROR: ${v(s['error'])}`);
      else if (s['peak_rss_mb'] !== undefined) out.push(`  ${side.padEnd(17)} peak RSS ${v(s['peak_rss_mb'])} MB`);
    }
    return out;
  },
  stores: (f) => {
    const out: string[] = [];
    for (const [key, perS] of Object.entries((f['turns_per_s'] ?? {}) as Record<string, number | null>)) {
      const c = (f[key] ?? {}) as Figures;
      const why =
        c['skipped'] !== undefined
          ? `skipped: ${v(c['skipped'])}`
          : c['error'] !== undefined
            ? `ERROR: ${v(c['error'])}`
            : `${v(perS)} turns/s (rounds ${v(c['turns_per_s_rounds'])}; ÷ relay ${v(c['ratio_to_baseline'])}) · turn p50 ${v(c['turn_p50_ms'])} p99 ${v(c['turn_p99_ms'])} ms · peak RSS ${v(c['peak_rss_mb'])} MB`;
      out.push(`  ${key.padEnd(11)} ${why}`);
    }
    out.push(`  baseline    ${v(f['baseline_req_per_s'])} req/s (the relay, alternated with the configurations above)`);
    out.push(`  ${v(f['users'])} users × 2 turns per round, best of ${v(f['rounds'])}, ${v(f['concurrency'])} in flight; PostgreSQL ${v(f['postgres_version'])}`);
    return out;
  },
  million: (f) => {
    const side = (name: string) => {
      const s = (f[name] ?? {}) as Figures;
      return `  ${v(s['conversations']).padStart(9)} stored: turn p50 ${v(s['turn_p50_ms'])} p99 ${v(s['turn_p99_ms'])} ms · ${v(s['turns_per_s'])} turns/s · seeded in ${v(s['seed_s'])} s (${v(s['db_mb'])} MB) · ready in ${v(s['ready_ms'])} ms · peak RSS ${v(s['peak_rss_mb'])} MB`;
    };
    return [side('small'), side('large'), `  ratio large ÷ small: turn p50 ${v(f['ratio_turn_p50'])}, p99 ${v(f['ratio_turn_p99'])}, turns/s ${v(f['ratio_turns_per_s'])}`];
  },
};
