/**
 * The Cloud API route: recorded like the other provider routes (endpoint `cloud-api`), with the
 * same latency and status faults, then checked by {@link handleCloud}; statuses follow the answer.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { SANDBOX_PATHS } from '../constants.js';
import { parseIncoming, redactBody, redactHeaders, send } from '../http.js';
import type { SandboxClock } from '../types.js';
import { handleCloud, type CloudDeps, type CloudReply } from './endpoint.js';
import { graphError } from './graph-error.js';
import type { StatusQueue } from './statuses.js';

/** What the route needs besides the endpoint's state. */
export interface CloudRouteDeps extends CloudDeps {
  readonly clock: SandboxClock;
  readonly sleep: (ms: number) => Promise<void>;
  readonly statuses: StatusQueue;
}

/** `POST /cloud/:version/:phoneNumberId/messages`, relative to where the sandbox is mounted. */
export function cloudRouter(deps: CloudRouteDeps): Router {
  const router = express.Router();
  const path = `${SANDBOX_PATHS.cloud}/:version/:phoneNumberId/messages`;
  router.post(path, express.raw({ type: () => true, limit: '1mb' }), (req, res) => serve(deps, req, res));
  router.all(path, (req, res) => {
    res.setHeader('allow', 'POST');
    send(res, graphError(100, { status: 405, details: `Method ${req.method} is not allowed here; use POST` }));
  });
  router.use(bodyErrors);
  return router;
}

/** A body that is too large or unreadable, answered in the Graph shape before the endpoint sees it. */
function bodyErrors(err: unknown, req: Request, res: Response, next: NextFunction): void {
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : Number.NaN;
  if (!req.path.startsWith(`${SANDBOX_PATHS.cloud}/`) || !(status >= 400 && status < 500)) return next(err);
  send(res, graphError(100, { status, details: err instanceof Error ? err.message : 'Bad request' }));
}

async function serve(deps: CloudRouteDeps, req: Request, res: Response): Promise<void> {
  const incoming = parseIncoming(req.headers, req.body);
  const record = deps.recorder.addRequest({
    endpoint: 'cloud-api',
    method: req.method,
    path: req.path,
    url: req.originalUrl,
    headers: redactHeaders(req.headers),
    body: redactBody(incoming.body),
    at: deps.clock.now(),
  });
  const delay = deps.faults.takeLatency('cloud-api');
  if (delay > 0) await deps.sleep(delay);
  const { version, phoneNumberId } = req.params as { version: string; phoneNumberId: string };
  const reply: CloudReply = deps.faults.takeStatus('cloud-api') ?? handleCloud(incoming, version, phoneNumberId, deps);
  record.status = reply.status;
  record.response = redactBody(reply.body);
  if (reply.fault !== undefined) record.fault = reply.fault;
  deps.recorder.answered(record);
  send(res, reply);
  if (reply.after !== undefined) deps.statuses.push(reply.after);
}
