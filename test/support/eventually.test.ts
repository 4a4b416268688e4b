/** The test-support `eventually`: retries until the probe holds, and fails with what it last saw. */
import { describe, expect, it } from 'vitest';
import { eventually } from './eventually.js';

describe('eventually', () => {
  it('resolves to what the probe returned once it stops failing', async () => {
    let n = 0;
    const got = await eventually(
      () => {
        n++;
        expect(n).toBeGreaterThanOrEqual(3);
        return n;
      },
      { intervalMs: 1 },
    );
    expect(got).toBe(3);
  });

  it('treats false as not yet', async () => {
    let n = 0;
    await eventually(() => ++n === 2, { intervalMs: 1 });
    expect(n).toBe(2);
  });

  it('fails with the last assertion error it saw, as message and cause', async () => {
    let n = 0;
    const err = await eventually(() => expect(++n).toBe(-1), { timeoutMs: 30, intervalMs: 1, what: 'n to reach -1' }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/^n to reach -1 did not hold within 30 ms \(\d+ tries\); the last try failed with: expected \d+ to be -1/);
    expect(String((err as Error).message)).toContain(`expected ${n} to be -1`);
    expect((err as Error).cause).toBeInstanceOf(Error);
  });

  it('says when a boolean check still returned false', async () => {
    await expect(eventually(() => false, { timeoutMs: 10, intervalMs: 1 })).rejects.toThrow(/the condition did not hold within 10 ms .*; the check still returned false/);
  });
});
