/**
 * The end-to-end benchmark's baseline (bench/e2e.ts): the least a webhook-to-reply server can do.
 * A bare Express app that reads the raw body, checks the same `X-Hub-Signature-256` HMAC, parses the
 * JSON, picks the reply for the message (the same request body Colloquy sent for it) and forwards
 * it with one undici POST to the provider's messaging endpoint (Bearer token fetched once at
 * start), answering the webhook only after the provider accepted the forward. No storage, no
 * conversation state, no retries.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
// Outside src/ the dependency rules do not apply: the baseline uses the bare client the adapter is built on.
import { Agent } from 'undici';

/** The messaging endpoint's path under the provider's base URL (provider.md §1.2). */
const MESSAGING_PATH = '/messaging-bsp-api-endpoint-ws/services/v1/messaging';

/** What {@link startBaseline} takes. */
export interface BaselineOptions {
  /** HMAC key of `X-Hub-Signature-256`. */
  readonly secret: string;
  /** The provider's `{base_url}` (the messaging endpoint hangs under it). */
  readonly baseUrl: string;
  /** The identity provider's `{auth_url}` (`POST {auth_url}/token`). */
  readonly authUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The reply to a text message (any first message): a request body whose `to` is replaced. */
  readonly onText: Readonly<Record<string, unknown>>;
  /** The reply to a tap (an interactive message): a request body whose `to` is replaced. */
  readonly onTap: Readonly<Record<string, unknown>>;
  /** Connections to the provider (default 64, the adapter's default). */
  readonly connections?: number | undefined;
  readonly port?: number | undefined;
  readonly host?: string | undefined;
}

/** A running baseline server. */
export interface RunningBaseline {
  /** `http://host:port`; the webhook is `POST {url}/webhook`. */
  readonly url: string;
  /** Token requests made (1 after start) and forwards by outcome. */
  stats(): { tokenRequests: number; forwarded: number; failed: number; refused: number; errors: string[] };
  close(): Promise<void>;
}

interface CloudEnvelope {
  entry?: { changes?: { value?: { messages?: { from?: unknown; type?: unknown }[] } }[] }[];
}

/** Starts the baseline: fetches the token once, then serves `POST /webhook`. */
export async function startBaseline(o: BaselineOptions): Promise<RunningBaseline> {
  const agent = new Agent({ connections: o.connections ?? 64, keepAliveTimeout: 30_000 });
  const provider = new URL(o.baseUrl);
  const messagingPath = `${provider.pathname.replace(/\/+$/, '')}${MESSAGING_PATH}`;
  const auth = new URL(o.authUrl);
  let tokenRequests = 0;
  let forwarded = 0;
  let failed = 0;
  let refused = 0;
  const errors: string[] = [];
  const note = (e: string) => {
    if (errors.length < 5) errors.push(e);
  };

  tokenRequests++;
  const tokenRes = await agent.request({
    origin: auth.origin,
    path: `${auth.pathname.replace(/\/+$/, '')}/token`,
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: o.clientId, client_secret: o.clientSecret }).toString(),
  });
  const grant = (await tokenRes.body.json()) as { access_token?: unknown };
  if (tokenRes.statusCode !== 200 || typeof grant.access_token !== 'string') throw new Error(`baseline: token request failed with ${tokenRes.statusCode}`);
  const headers = { authorization: `Bearer ${grant.access_token}`, 'content-type': 'application/json' };

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.post('/webhook', express.raw({ type: 'application/json', limit: '1mb' }), (req, res) => {
    void (async () => {
      const raw: unknown = req.body;
      if (!Buffer.isBuffer(raw)) {
        refused++;
        res.status(415).json({ error: 'expected application/json' });
        return;
      }
      const header = req.headers['x-hub-signature-256'];
      const given = Buffer.from(typeof header === 'string' ? header.trim().toLowerCase() : '');
      const expected = Buffer.from(`sha256=${createHmac('sha256', o.secret).update(raw).digest('hex')}`);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        refused++;
        res.status(401).json({ error: 'bad signature' });
        return;
      }
      let json: CloudEnvelope;
      try {
        json = JSON.parse(raw.toString('utf8')) as CloudEnvelope;
      } catch {
        refused++;
        res.status(400).json({ error: 'invalid JSON' });
        return;
      }
      const message = json.entry?.[0]?.changes?.[0]?.value?.messages?.[0];
      if (message === undefined || typeof message.from !== 'string') {
        refused++;
        res.status(400).json({ error: 'no message' });
        return;
      }
      const reply = message.type === 'interactive' ? o.onTap : o.onText;
      try {
        const r = await agent.request({ origin: provider.origin, path: messagingPath, method: 'POST', headers, body: JSON.stringify({ ...reply, to: message.from }) });
        const text = await r.body.text();
        if (r.statusCode >= 200 && r.statusCode < 300) {
          forwarded++;
          res.status(200).json({ ok: true });
        } else {
          failed++;
          note(`provider answered ${r.statusCode}: ${text.slice(0, 300)}`);
          res.status(502).json({ error: 'provider refused' });
        }
      } catch (err) {
        failed++;
        note(`forward failed: ${err instanceof Error ? err.message : String(err)}`);
        res.status(502).json({ error: 'forward failed' });
      }
    })();
  });

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  server.keepAliveTimeout = 60_000;
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${o.host ?? '127.0.0.1'}:${port}`,
    stats: () => ({ tokenRequests, forwarded, failed, refused, errors: [...errors] }),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await agent.close();
    },
  };
}
