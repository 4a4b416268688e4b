import { describe, expect, it } from 'vitest';
import { DIALECTS } from './helpers.js';

describe.each(DIALECTS)('$name', ({ open }) => {
  it('health() says a fresh store can take work', async () => {
    const store = await open();
    expect(store.health).toBeTypeOf('function');
    expect(await store.health!()).toEqual({ ok: true });
  });

  it('health() of a closed store is not ok, with a reason', async () => {
    const store = await open();
    await store.close();
    const health = await store.health!();
    expect(health.ok).toBe(false);
    expect(health.reason).toEqual(expect.any(String));
  });
});
