/**
 * The bench's IPC to its children survives a child that dies between two calls: a Ctrl-C signals
 * the whole process group, so a child can be gone while the orchestrator still sees it connected
 * and writes to it. That write fails with EPIPE; it must reject the one call, not crash the
 * orchestrator before its cleanup stops PostgreSQL and the other children.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Child, spawnRole } from '../../bench/ipc.js';

let child: Child | undefined;

afterEach(async () => {
  await child?.close();
  child = undefined;
});

describe('bench IPC', () => {
  it('rejects a call to a child that died a moment ago, and still closes it', async () => {
    child = spawnRole('sandbox', {});
    await child.ready;
    process.kill(child.pid, 'SIGKILL');
    // Keep the event loop busy until the child is surely dead, so its exit and the closing of the
    // IPC channel are not seen yet: the next write goes to a dead peer, as in the Ctrl-C case.
    const until = Date.now() + 300;
    while (Date.now() < until) {
      /* spin */
    }
    expect(child.proc.connected).toBe(true);
    // The write's EPIPE rejects the call (or, had the exit been seen first, the exit does); either
    // way nothing is thrown at the process, which vitest would report as an unhandled error.
    await expect(child.call('stats')).rejects.toThrow(/^sandbox(: stats could not be sent \(write EPIPE\)| exited \(SIGKILL\))$/);
    await child.close();
    expect(child.proc.signalCode).toBe('SIGKILL');
  }, 30_000);
});
