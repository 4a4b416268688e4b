/**
 * The `flows` part's baseline (bench/flows.ts): the least a Flow endpoint can do. A bare Express
 * app that reads the raw body, checks the same `X-Hub-Signature-256` HMAC, unwraps the AES key with
 * RSA-OAEP-SHA256, opens the payload (AES-128-GCM), parses it, and answers a constant screen sealed
 * with the request's key under the inverted IV (`text/plain`). No conversation, no storage: the
 * ratio to it is what answering from the conversation costs. node:crypto directly
 * (bench/flow-crypto.ts), nothing of Colloquy's flows code.
 */
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { FLOW_BENCH_DAYS } from './flow-shape.js';
import { openRequest, sealAnswer, signatureMatches } from './flow-crypto.js';
import { peakRssMb, serveCalls, watchEgress, type Ready } from './ipc.js';
import type { ServerStats } from './server-stats.js';

/** What {@link startFlowBaseline} takes. */
export interface FlowBaselineOptions {
  /** The app secret of `X-Hub-Signature-256`. */
  readonly secret: string;
  /** The private key's PEM file (encrypted with `passphrase`). */
  readonly privateKeyPath: string;
  readonly passphrase: string;
}

/** A running baseline endpoint. */
export interface RunningFlowBaseline {
  /** `http://127.0.0.1:port`; the endpoint is `POST {url}/flows`. */
  readonly url: string;
  /** Requests answered, and refused (bad signature, or not decryptable), with the first reasons. */
  stats(): { answered: number; refused: number; errors: string[] };
  close(): Promise<void>;
}

/** The constant answer: a screen about the size of Colloquy's. */
const ANSWER = { screen: 'DAYS', data: { days: FLOW_BENCH_DAYS } };

/** Starts the baseline endpoint on 127.0.0.1. */
export async function startFlowBaseline(o: FlowBaselineOptions): Promise<RunningFlowBaseline> {
  const key = createPrivateKey({ key: readFileSync(o.privateKeyPath, 'utf8'), format: 'pem', passphrase: o.passphrase });
  let answered = 0;
  let refused = 0;
  const errors: string[] = [];
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.post('/flows', express.raw({ type: () => true, limit: '1mb' }), (req, res) => {
    const raw: unknown = req.body;
    if (!Buffer.isBuffer(raw) || !signatureMatches(raw, req.headers['x-hub-signature-256'] as string | undefined, o.secret)) {
      refused++;
      res.status(432).json({ error: 'bad signature' });
      return;
    }
    try {
      const opened = openRequest(JSON.parse(raw.toString('utf8')), key);
      const payload = opened.payload as { action?: unknown };
      const answer = payload.action === 'ping' ? { data: { status: 'active' } } : ANSWER;
      answered++;
      res.status(200).type('text/plain').send(sealAnswer(answer, opened));
    } catch (err) {
      refused++;
      if (errors.length < 5) errors.push(err instanceof Error ? err.message : String(err));
      res.status(421).json({ error: 'cannot decrypt' });
    }
  });
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  server.keepAliveTimeout = 60_000;
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stats: () => ({ answered, refused, errors: [...errors] }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The `flow-baseline` child (bench/roles.ts): serves the baseline and answers the bench's calls. */
export async function flowBaselineRole(arg: FlowBaselineOptions): Promise<void> {
  const egress = watchEgress();
  const server = await startFlowBaseline(arg);
  serveCalls({
    idle: () => undefined,
    cpuMs: (): number => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    },
    stats: (): ServerStats => {
      const s = server.stats();
      return {
        tokenRequests: 0,
        turnsOk: s.answered,
        turnsError: s.refused,
        sendsAccepted: 0,
        webhookRequests: s.answered + s.refused,
        warnings: 0,
        errors: s.refused,
        logged: s.errors,
        journalMode: 'none',
        storeClass: 'none',
        egress: egress(),
        peakRssMb: peakRssMb(),
        rssMb: Math.round(process.memoryUsage.rss() / 1024 / 1024),
      };
    },
    close: async () => {
      await server.close();
      setImmediate(() => process.exit(0));
    },
  });
  process.send!({ ready: true, url: server.url } satisfies Ready);
}
