/** `startSandbox()`: the sandbox on its own HTTP server, for `colloquy serve` and manual tests. */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import type { Sandbox } from './api.js';
import { createSandbox } from './sandbox.js';
import type { SandboxOptions } from './types.js';

/** What {@link startSandbox} takes: where to listen, and the sandbox's own options. */
export interface StartSandboxOptions extends SandboxOptions {
  /** The port (default 0: any free port). */
  readonly port?: number | undefined;
  /** The interface (default `127.0.0.1`). */
  readonly host?: string | undefined;
  /** An existing sandbox to serve instead of a new one. */
  readonly sandbox?: Sandbox | undefined;
}

/** A sandbox listening on its own server. */
export interface RunningSandbox {
  /** The base URL, e.g. `http://127.0.0.1:41234`: both `base_url` and `auth_url` of a client. */
  readonly url: string;
  readonly sandbox: Sandbox;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Starts a sandbox on its own HTTP server. Prints nothing: the caller reports the URL. */
export async function startSandbox(options: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const sandbox = options.sandbox ?? createSandbox(options);
  const app = express();
  app.disable('x-powered-by');
  app.use(sandbox.router);
  const host = options.host ?? '127.0.0.1';
  const server = await listen(app, options.port ?? 0, host);
  const { port } = server.address() as AddressInfo;
  return { url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, sandbox, close: () => close(server) };
}

function listen(app: express.Express, port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}
