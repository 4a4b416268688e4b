/**
 * The provider routes. Each call goes the same way: record it, wait any injected latency, answer
 * an injected status fault if one is queued, else let the endpoint handle it; record the answer.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { SANDBOX_PATHS } from './constants.js';
import type { EndpointDeps, EndpointHandler } from './deps.js';
import { parseIncoming, redactBody, redactHeaders, send } from './http.js';
import { handleMessaging } from './messaging-endpoint.js';
import { INVALID_PARAMETER_CODE, metaError } from './replies.js';
import { handleSms } from './sms-endpoint.js';
import { handleToken } from './token-endpoint.js';
import type { SandboxEndpoint } from './types.js';

/** The largest request body accepted. */
const BODY_LIMIT = '1mb';

/** The provider's three routes, relative to wherever the router is mounted. */
export function providerRouter(deps: EndpointDeps): Router {
  const router = express.Router();
  const raw = express.raw({ type: () => true, limit: BODY_LIMIT });
  const routes: [SandboxEndpoint, string, EndpointHandler][] = [
    ['token', SANDBOX_PATHS.token, handleToken],
    ['messaging', SANDBOX_PATHS.messaging, handleMessaging],
    ['sms', SANDBOX_PATHS.sms, handleSms],
  ];
  for (const [endpoint, path, handler] of routes) {
    router.post(path, raw, (req, res) => serve(endpoint, path, handler, deps, req, res));
    router.all(path, methodNotAllowed);
  }
  router.use(bodyErrors);
  return router;
}

async function serve(endpoint: SandboxEndpoint, path: string, handler: EndpointHandler, deps: EndpointDeps, req: Request, res: Response): Promise<void> {
  const incoming = parseIncoming(req.headers, req.body);
  const record = deps.recorder.addRequest({
    endpoint,
    method: req.method,
    path,
    url: req.originalUrl,
    headers: redactHeaders(req.headers),
    body: redactBody(incoming.body),
    at: deps.clock.now(),
  });
  const delay = deps.faults.takeLatency(endpoint);
  if (delay > 0) await deps.sleep(delay);
  const reply = deps.faults.takeStatus(endpoint) ?? handler(incoming, deps);
  record.status = reply.status;
  record.response = redactBody(reply.body);
  if (reply.fault !== undefined) record.fault = reply.fault;
  deps.recorder.answered(record);
  send(res, reply);
}

function methodNotAllowed(req: Request, res: Response): void {
  res.setHeader('allow', 'POST');
  send(res, metaError(405, INVALID_PARAMETER_CODE, `Method ${req.method} is not allowed here; use POST`));
}

/** A body that is too large or unreadable: answered before any endpoint sees it. */
function bodyErrors(err: unknown, _req: Request, res: Response, next: NextFunction): void {
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : NaN;
  if (!(status >= 400 && status < 500)) return next(err);
  send(res, metaError(status, INVALID_PARAMETER_CODE, err instanceof Error ? err.message : 'Bad request'));
}
