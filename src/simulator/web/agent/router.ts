/**
 * The agent console at `/simulator/agent`: a page that lists the handoff queue and lets a person
 * claim a conversation, read it, answer the customer and release it, over the agents' HTTP API on
 * the same server. Its script and styles are plain files beside this module (strict CSP: no inline
 * code), read once from the package's `src/` folder, which ships with it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import express, { type Response, type Router } from 'express';
import { consoleHtml } from './html.js';

/** The console's folder in the package's sources (the same from `src/` and from `dist/`). */
const DIR = fileURLToPath(new URL('../../../../src/simulator/web/agent/', import.meta.url));

const ASSETS: Readonly<Record<string, { type: string; file: string }>> = {
  'console.js': { type: 'text/javascript; charset=utf-8', file: 'console.js' },
  'console.css': { type: 'text/css; charset=utf-8', file: 'console.css' },
};

/** Creates the console's router; mount it at `/simulator/agent`. */
export function createAgentConsoleRouter(): Router {
  const bodies = new Map(Object.entries(ASSETS).map(([name, a]) => [name, readFileSync(`${DIR}${a.file}`, 'utf8')]));
  const router = express.Router();
  router.get('/', (req, res) => void secure(res).type('html').send(consoleHtml(req.baseUrl)));
  router.get('/assets/:name', (req, res) => {
    const name = String(req.params['name']);
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!asset) return void res.status(404).type('text/plain').send('not found');
    res.set('Cache-Control', 'no-cache').set('X-Content-Type-Options', 'nosniff').type(asset.type).send(bodies.get(name));
  });
  return router;
}

function secure(res: Response): Response {
  return res
    .set('Cache-Control', 'no-store')
    .set('X-Content-Type-Options', 'nosniff')
    .set('Referrer-Policy', 'no-referrer')
    .set(
      'Content-Security-Policy',
      ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"].join('; '),
    );
}
