/**
 * The HTTP server of `colloquy serve`: health and metrics, plus the routers mounted on it (the
 * webhook, and with the sandbox its provider routes and the simulator). Routers can be mounted
 * after it listens, since the sandbox's URL (its port) must be known before the adapter exists.
 */
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import express, { type RequestHandler } from 'express';
import { ColloquyError } from '../errors.js';
import type { Metrics } from '../metrics.js';

/** A listening server. */
export interface HttpServer {
  /** `http://host:port`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Mounts a router under a path (`/` for the webhook). */
  mount(path: string, handler: RequestHandler): void;
  /** Stops accepting connections; open keep-alive connections are closed once idle. */
  close(): Promise<void>;
}

/** The body of `GET /healthz`. */
export interface HealthBody {
  readonly ok: boolean;
  readonly [k: string]: unknown;
}

/** What {@link startHttpServer} takes. */
export interface HttpServerOptions {
  readonly port: number;
  readonly host: string;
  readonly metrics: Metrics;
  /** The body of `GET /healthz`; `ok: false` answers 503. */
  readonly health: () => HealthBody | Promise<HealthBody>;
  /** Brings gauges read from elsewhere (the store's group commit) up to date before `GET /metrics` renders. */
  readonly beforeMetrics?: (() => void) | undefined;
}

/** Starts the server with `GET /healthz` and `GET /metrics`. */
export async function startHttpServer(o: HttpServerOptions): Promise<HttpServer> {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => {
    void Promise.resolve()
      .then(() => o.health())
      .then((h) => res.status(h.ok ? 200 : 503).json(h))
      .catch((err: unknown) => res.status(503).json({ ok: false, reason: `the health check failed: ${err instanceof Error ? err.message : String(err)}` }));
  });
  app.get('/metrics', async (_req, res) => {
    o.beforeMetrics?.();
    res.type(o.metrics.contentType).send(await o.metrics.render());
  });
  const mounts = express.Router();
  app.use(mounts);
  const server = createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(listenError(err, o.host, o.port)));
    server.listen(o.port, o.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.host === '0.0.0.0' || o.host === '::' ? '127.0.0.1' : o.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    mount: (path, handler) => {
      mounts.use(path, handler);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 5_000).unref();
      }),
  };
}

/** Why the server could not listen, for a person: the port and what to do. */
function listenError(err: NodeJS.ErrnoException, host: string, port: number): ColloquyError {
  const where = `${host}:${port}`;
  if (err.code === 'EADDRINUSE') return new ColloquyError('listen', `${where} is already in use (another server is running there): stop it, or set PORT to another port`, { cause: err });
  if (err.code === 'EACCES') return new ColloquyError('listen', `${where}: permission denied (ports below 1024 need privileges): set PORT to 1024 or above`, { cause: err });
  if (err.code === 'EADDRNOTAVAIL') return new ColloquyError('listen', `${where}: this machine has no such address: check HOST`, { cause: err });
  return new ColloquyError('listen', `cannot listen on ${where}: ${err.message}`, { cause: err });
}
