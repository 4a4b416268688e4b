/** The Metrics facade over prom-client: one registry per instance, the exposition format, misuse refused. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics.js';

describe('Metrics', () => {
  it('keeps a prom-client registry of its own and renders the Prometheus text format', async () => {
    const m = new Metrics();
    expect(m.registry).toBeInstanceOf(Registry);
    m.inc('colloquy_turns_total', { bot: 'pizza', outcome: 'ok' });
    m.inc('colloquy_turns_total', { outcome: 'ok', bot: 'pizza' }, 2);
    m.set('colloquy_store_checkpoints', { kind: 'a"b\\c' }, 4);
    m.observe('colloquy_turn_seconds', { bot: 'pizza' }, 0.002);
    const text = await m.render();
    expect(text).toContain('# HELP colloquy_turns_total Turns run, by bot and outcome\n# TYPE colloquy_turns_total counter\ncolloquy_turns_total{bot="pizza",outcome="ok"} 3');
    expect(text).toContain('colloquy_store_checkpoints{kind="a\\"b\\\\c"} 4');
    expect(text).toContain('colloquy_turn_seconds_bucket{le="0.001",bot="pizza"} 0');
    expect(text).toContain('colloquy_turn_seconds_bucket{le="0.0025",bot="pizza"} 1');
    expect(text).toContain('colloquy_turn_seconds_count{bot="pizza"} 1');
    expect(m.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(m.value('colloquy_turns_total', { outcome: 'ok', bot: 'pizza' })).toBe(3);
    expect(m.value('colloquy_turn_seconds', { bot: 'pizza' })).toBe(1);
    expect(m.total('colloquy_turns_total')).toBe(3);
    expect(m.value('colloquy_timers_fired_total')).toBe(0);
  });

  it('lets many instances use the same names without sharing values', async () => {
    const a = new Metrics();
    const b = new Metrics();
    a.inc('colloquy_inbound_total', { source: 'webhook', duplicate: 'false' });
    b.inc('colloquy_inbound_total', { source: 'webhook', duplicate: 'false' }, 5);
    expect(await a.render()).toContain('colloquy_inbound_total{source="webhook",duplicate="false"} 1');
    expect(await b.render()).toContain('colloquy_inbound_total{source="webhook",duplicate="false"} 5');
  });

  it('adds the process metrics only when asked', async () => {
    expect(await new Metrics().render()).not.toContain('process_cpu_user_seconds_total');
    const text = await new Metrics({ processMetrics: true }).render();
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d/m);
  });

  it('refuses a metric used with other labels, as another kind, or not declared, naming it', () => {
    // The types already refuse these; the casts stand for JavaScript callers.
    const m = new Metrics();
    m.inc('colloquy_sends_total', { channel: 'sms', outcome: 'accepted' });
    expect(() => m.inc('colloquy_sends_total', { channel: 'sms' } as never)).toThrow('metric colloquy_sends_total has the labels [channel, outcome]; it was given [channel]');
    expect(() => m.inc('colloquy_sends_total', {} as never)).toThrow('metric colloquy_sends_total has the labels [channel, outcome]; it was given []');
    expect(() => m.observe('colloquy_sends_total' as never, { channel: 'sms' } as never, 1)).toThrow('metric colloquy_sends_total is a counter; it cannot be used as a histogram');
    expect(() => new Metrics().observe('colloquy_turns_total' as never, { bot: 'a', outcome: 'ok' } as never, 1)).toThrow('metric colloquy_turns_total is a counter; it cannot be used as a histogram');
    expect(() => m.inc('colloquy_nope_total' as never, {} as never)).toThrow('metric colloquy_nope_total is not declared in src/metrics-catalog.ts');
  });
});
