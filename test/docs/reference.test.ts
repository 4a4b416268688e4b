/**
 * The reference pages generated from the code, and the code they describe. Each page must be what
 * `npm run docs:generate` writes now; `colloquy --help` and `loadConfig()` must name the declared
 * variables; `/metrics` must show the declared help; and the running server must answer every
 * declared route and mount no route that is not declared.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referencePages } from '../../scripts/reference-docs.js';
import { createAgentRouter } from '../../src/agent/router.js';
import { main } from '../../src/cli/main.js';
import type { Io } from '../../src/cli/io.js';
import { loadConfig } from '../../src/config.js';
import { ENV_VARS } from '../../src/env.js';
import { HTTP_ROUTES, type RouteOwner } from '../../src/http-routes.js';
import { FlowEndpoint } from '../../src/flows/endpoint.js';
import { createFlowsRouter } from '../../src/webhook/flows-route.js';
import { METRICS, type MetricName } from '../../src/metrics-catalog.js';
import { Metrics } from '../../src/metrics.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createAgentConsoleRouter, createSimulatorRouter, simulatorExtension } from '../../src/simulator/web/index.js';
import { createWebhookRouter } from '../../src/webhook/router.js';
import orderBot from '../fixtures/order-bot.js';

const ROOT = join(import.meta.dirname, '..', '..');

describe('the generated reference pages', () => {
  it.each(Object.entries(referencePages()))('%s is what the declarations say now', (path, text) => {
    let onDisk: string;
    try {
      onDisk = readFileSync(join(ROOT, path), 'utf8');
    } catch {
      onDisk = '(missing)';
    }
    expect(onDisk === text, `${path} is out of date with the code: run \`npm run docs:generate\` and commit the result`).toBe(true);
  });
});

describe('the environment variables', () => {
  it('colloquy --help lists every declared variable with its default', async () => {
    let out = '';
    const io: Io = { out: (s) => void (out += s), err: (s) => void (out += s), env: {}, json: false } as Io;
    expect(await main(['--help'], io)).toBe(0);
    for (const v of ENV_VARS) expect(out).toMatch(new RegExp(`^  ${v.name} +(default|unset): `, 'm'));
  });

  it('every COLLOQUY_ variable the sources name is declared', () => {
    const declared = new Set(ENV_VARS.map((v) => v.name));
    const named = new Set<string>();
    const walk = (dir: string): void => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts')) for (const m of readFileSync(p, 'utf8').matchAll(/'(COLLOQUY_[A-Z_]+)'/g)) named.add(m[1]!);
      }
    };
    walk(join(ROOT, 'src'));
    // A process warning's code, not a variable.
    named.delete('COLLOQUY_SANDBOX_LISTENER');
    named.delete('COLLOQUY_SANDBOX_STATUS');
    expect([...named].filter((n) => !declared.has(n))).toEqual([]);
  });

  it('loadConfig applies the declared defaults', () => {
    const c = loadConfig({});
    const d = (name: string) => ENV_VARS.find((v) => v.name === name)!.default;
    expect(c.port).toBe(d('PORT'));
    expect(c.host).toBe(d('HOST'));
    expect(c.db).toBe(d('COLLOQUY_DB'));
    expect(c.logLevel).toBe(d('COLLOQUY_LOG_LEVEL'));
    expect(c.maxBodyBytes).toBe(d('COLLOQUY_MAX_BODY_BYTES'));
    expect(c.sandboxPublic).toBe(d('COLLOQUY_SANDBOX_PUBLIC'));
  });

  it('loadConfig checks a variable against its declared range, naming it', () => {
    expect(() => loadConfig({ COLLOQUY_LANE_CONCURRENCY: '0' })).toThrow('COLLOQUY_LANE_CONCURRENCY: must be a whole number from 1 to 100000, got "0"');
    expect(() => loadConfig({ COLLOQUY_LOG_LEVEL: 'loud' })).toThrow('COLLOQUY_LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"');
  });
});

describe('the metrics', () => {
  it('/metrics shows each declared metric with its declared help, type and labels', async () => {
    const m = new Metrics();
    const names = Object.keys(METRICS) as MetricName[];
    for (const name of names) {
      const decl = METRICS[name];
      const labels = Object.fromEntries(decl.labels.map((l) => [l, 'x'])) as never;
      if (decl.type === 'counter') m.inc(name as never, labels);
      else if (decl.type === 'gauge') m.set(name as never, labels, 1);
      else m.observe(name as never, labels, 0.1);
    }
    const text = await m.render();
    for (const name of names) {
      const decl = METRICS[name];
      expect(text).toContain(`# HELP ${name} ${decl.help}\n# TYPE ${name} ${decl.type}\n`);
      const sample = new RegExp(`^${name}${decl.type === 'histogram' ? '_count' : ''}(?:\\{([^}\\n]*)\\})? `, 'm').exec(text);
      expect(sample, name).not.toBeNull();
      expect(
        (sample?.[1] ?? '')
          .split(',')
          .filter(Boolean)
          .map((l) => l.split('=')[0])
          .sort(),
        name,
      ).toEqual([...decl.labels].sort());
    }
  });
});

describe('the HTTP routes', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const config = { ...loadConfig({ HOST: '127.0.0.1' }), port: 0, db: ':memory:', logLevel: 'silent' as const };
    server = await startServer({ bots: [orderBot], config, extensions: [simulatorExtension] });
  });
  afterAll(() => server?.close());

  /** A concrete path for a declared one. */
  const concrete = (path: string) => path.replace(':id', '1').replace(':name', 'console.js').replace('*', 'app.js');

  it.each(HTTP_ROUTES.map((r) => [`${r.method} ${r.path}`, r] as const))('%s is answered by the running server', async (_, r) => {
    const stop = new AbortController();
    const res = await fetch(`${server.url}${concrete(r.path)}`, {
      method: r.method,
      signal: stop.signal,
      ...(r.method === 'POST' && { headers: { 'content-type': 'application/json' }, body: '{}' }),
    });
    // An event stream never ends on its own: its first event is the answer.
    const body = res.headers.get('content-type')?.startsWith('text/event-stream') ? await firstChunk(res, stop) : await res.text();
    // Express's own 404 ("Cannot GET /x"), or a router's catch-all for paths it does not have.
    expect(body).not.toMatch(/Cannot (GET|POST|DELETE)|no such (agents' API|simulator API) route/);
    expect(res.status).not.toBe(405);
  });

  async function firstChunk(res: Response, stop: AbortController): Promise<string> {
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    stop.abort();
    return new TextDecoder().decode(value);
  }

  /** `METHOD /path` of every route a router holds (and routers mounted in it without a path). */
  function routesOf(router: Router, prefix: string): string[] {
    const out: string[] = [];
    type Layer = { route?: { path: string; methods: Record<string, boolean> }; handle?: { stack?: Layer[] }; slash?: boolean };
    for (const layer of (router as unknown as { stack: Layer[] }).stack) {
      if (layer.route) {
        for (const [m, on] of Object.entries(layer.route.methods)) if (on && m !== '_all') out.push(`${m.toUpperCase()} ${prefix}${layer.route.path}`);
      } else if (layer.slash && layer.handle?.stack) out.push(...routesOf(layer.handle as unknown as Router, prefix));
    }
    return out;
  }

  it('no router mounts a route that is not declared', () => {
    const sandbox = server.sandbox!;
    const routers: [RouteOwner, Router, string][] = [
      ['webhook', createWebhookRouter({ runtime: server.runtime, defaultSender: '15550000001' }), ''],
      ['flows', createFlowsRouter({ endpoint: new FlowEndpoint({ exchange: server.runtime.flows, key: undefined, secrets: [] }) }), ''],
      ['agent', createAgentRouter({ desk: server.runtime.handoffs }), ''],
      ['simulator', createSimulatorRouter({ sandbox, runtime: server.runtime, store: server.store, defaultSender: '15550000001' }), '/simulator'],
      ['agent-console', createAgentConsoleRouter(), '/simulator/agent'],
      ['sandbox', sandbox.router, '/sandbox'],
    ];
    for (const [owner, router, prefix] of routers) {
      const declared = HTTP_ROUTES.filter((r) => r.owner === owner && !r.path.includes('*') && !r.path.startsWith('/sandbox/_sandbox')).map((r) => `${r.method} ${r.path.replace(/\/$/, '/')}`);
      const actual = routesOf(router, prefix).map((r) => r.replace(/^(\w+ \/simulator(?:\/agent)?)\/$/, '$1/'));
      expect(actual.sort(), owner).toEqual(declared.sort());
    }
  });
});
