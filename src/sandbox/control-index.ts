/** `GET /_sandbox/`: what a newcomer needs to drive the sandbox by hand (credentials and routes). */
import type { Request, Response } from 'express';
import type { Sandbox } from './api.js';
import { SANDBOX_CLOUD_API_VERSION, SANDBOX_PATHS } from './constants.js';

/** One control route: what the index lists and what the router runs. */
export interface ControlRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  readonly does: string;
  /** An example JSON body, for the index. */
  readonly body?: unknown;
  readonly action: (req: Request) => unknown;
}

const PROVIDER_ROUTES = [
  { method: 'POST', path: SANDBOX_PATHS.token, does: 'OAuth 2.0 client-credentials token ({auth_url}/token)' },
  { method: 'POST', path: SANDBOX_PATHS.messaging, does: 'interactive WhatsApp messages ({base_url})' },
  { method: 'POST', path: SANDBOX_PATHS.sms, does: 'SMS ({base_url})' },
] as const;

/** `GET /_sandbox/`: the credentials and every route, as JSON or (for a browser) a small page. */
export function controlIndex(sandbox: Sandbox, routes: readonly ControlRoute[], req: Request, res: Response): void {
  const control = req.baseUrl;
  const provider = control.endsWith(SANDBOX_PATHS.control) ? control.slice(0, -SANDBOX_PATHS.control.length) : control;
  const listing = {
    sandbox: 'Colloquy sandbox provider: a fake provider as strict as the real one, with control routes for tests',
    credentials: { clientId: sandbox.clientId, clientSecret: sandbox.clientSecret, sender: sandbox.sender },
    cloudApi: {
      route: `POST ${provider}${SANDBOX_PATHS.cloud}/{version}/{phone_number_id}/messages`,
      baseUrl: `${provider}${SANDBOX_PATHS.cloud}/${SANDBOX_CLOUD_API_VERSION}`,
      token: sandbox.cloudApi.token,
      numbers: sandbox.cloudApi.numbers.map((n) => `${n.phoneNumberId} (${n.displayNumber})`).join(', '),
    },
    provider: PROVIDER_ROUTES.map((r) => ({ method: r.method, path: `${provider}${r.path}`, does: r.does })),
    control: routes.map((r) => ({ method: r.method, path: `${control}${r.path}`, does: r.does, ...(r.body !== undefined && { body: r.body }) })),
  };
  res.set('Cache-Control', 'no-store');
  if (req.accepts(['json', 'html']) === 'html') res.type('html').send(indexHtml(listing));
  else res.json(listing);
}

type Listing = {
  sandbox: string;
  credentials: Record<string, string>;
  cloudApi: Record<string, string>;
  provider: { method: string; path: string; does: string }[];
  control: { method: string; path: string; does: string; body?: unknown }[];
};

function indexHtml(l: Listing): string {
  const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const rows = (rs: Listing['control']): string =>
    rs
      .map((r) => `<tr><td>${r.method}</td><td><code>${esc(r.path)}</code></td><td>${esc(r.does)}${r.body === undefined ? '' : `<br><code>${esc(JSON.stringify(r.body))}</code>`}</td></tr>`)
      .join('\n');
  const items = (o: Record<string, string>): string =>
    Object.entries(o)
      .map(([k, v]) => `<li>${k}: <code>${esc(v)}</code></li>`)
      .join('');
  const creds = items(l.credentials);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sandbox provider</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:60em}td{padding:.2em .6em;vertical-align:top}code{font-size:13px}</style></head>
<body><h1>Sandbox provider</h1><p>${esc(l.sandbox)}. The same listing as JSON: <code>curl</code> this address.</p>
<h2>Credentials</h2><ul>${creds}</ul>
<h2>Provider routes</h2><table>${rows(l.provider)}</table>
<h2>Cloud API mode</h2><ul>${items(l.cloudApi)}</ul>
<h2>Control routes (JSON bodies)</h2><table>${rows(l.control)}</table></body></html>`;
}
