import { describe, expect, it } from 'vitest';
import { commonEnvelope } from '../../src/webhook/common-shape.js';
import { envelopeSchema } from '../../src/webhook/schema.js';

const message = (extra: Record<string, unknown>) => ({ from: '15551234567', id: 'wamid.1', timestamp: '1700000000', ...extra });
const envelope = (value: Record<string, unknown>) => ({
  object: 'whatsapp_business_account',
  entry: [{ id: 'waba', changes: [{ field: 'messages', value: { messaging_product: 'whatsapp', metadata: { display_phone_number: '15550000001', phone_number_id: 'p' }, ...value } }] }],
});

const bases: unknown[] = [
  envelope({ contacts: [{ wa_id: '15551234567', profile: { name: 'Ann' } }], messages: [message({ type: 'text', text: { body: 'hi' } })] }),
  envelope({ messages: [message({ type: 'interactive', context: { from: '15550000001', id: 'wamid.0' }, interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } } })] }),
  envelope({ messages: [message({ type: 'interactive', interactive: { type: 'list_reply', list_reply: { id: 'r1', title: 'Row', description: 'd' } } })] }),
  envelope({ statuses: [{ id: 'wamid.2', status: 'delivered', timestamp: 1700000000, recipient_id: '15551234567' }] }),
  { object: 'whatsapp_business_account', entry: [{ id: 'waba', changes: [{ field: 'flows', value: { event: 'ENDPOINT_LATENCY', flow_id: '1', p90_latency: 1500, alert_state: 'ACTIVATED' } }] }] },
];

const replacements: unknown[] = [undefined, null, '', 'x', '+15551234567', '1234', '1700000000', 0, -1, 1.5, 2 ** 60, true, [], {}, [{}]];

/** Every envelope obtained by replacing (or removing) one value of `base`, anywhere in it. */
function* mutants(base: unknown): Generator<unknown> {
  function* at(node: unknown, set: (v: unknown) => unknown): Generator<unknown> {
    for (const r of replacements) yield set(r);
    if (typeof node !== 'object' || node === null) return;
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      yield* at(child, (v) => {
        const copy: Record<string, unknown> | unknown[] = Array.isArray(node) ? [...node] : { ...node };
        if (v === undefined && !Array.isArray(copy)) delete copy[key];
        else (copy as Record<string, unknown>)[key] = v;
        return set(copy);
      });
    }
  }
  yield* at(base, (v) => v);
}

/** What the batch reads from a valid envelope: each change's field and value. */
const read = (e: { entry: { changes: { field: string; value: unknown }[] }[] }) => e.entry.map((x) => x.changes.map((c) => [c.field, c.value]));

describe('the quick check of common webhook envelopes', () => {
  it('takes the common shapes', () => {
    for (const base of bases) expect(commonEnvelope(base)).toBe(base);
  });

  it('accepts nothing the schema refuses, and yields what the schema would', () => {
    let accepted = 0;
    let left = 0;
    for (const base of bases) {
      for (const m of mutants(base)) {
        const quick = commonEnvelope(m);
        const parsed = envelopeSchema.safeParse(m);
        if (quick === undefined) {
          left++;
          continue;
        }
        accepted++;
        expect(parsed.success, JSON.stringify(m)).toBe(true);
        expect(read(quick)).toEqual(read(parsed.data!));
      }
    }
    // Both outcomes were exercised: mutants it took and mutants it left to the schema.
    expect(accepted).toBeGreaterThan(20);
    expect(left).toBeGreaterThan(200);
  });
});
