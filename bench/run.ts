/** `npm run bench`: runs the benchmarks, prints a summary, and ends with one JSON line of all figures. */
import { benchTransport } from './transport.js';

const started = Date.now();
const transport = await benchTransport();

console.log('Transport (interactive sends to a local provider on 127.0.0.1)');
console.log(`  adapter   ${transport['adapter_msgs_per_s']} msgs/s`);
console.log(`  baseline  ${transport['baseline_msgs_per_s']} msgs/s  (bare undici POST loop, token fetched once)`);
console.log(`  ratio     ${transport['ratio']}  (adapter ÷ baseline)`);
console.log(`  token requests by the adapter: ${transport['adapter_token_requests']}`);
console.log(`  ${transport['messages_per_run']} messages per run, best of ${transport['rounds']}, concurrency ${transport['concurrency']}, ${transport['connections']} connections`);
console.log(`  took ${((Date.now() - started) / 1000).toFixed(1)} s`);
console.log(JSON.stringify({ transport }));
