/**
 * `POST /flows` and `POST /flows/:phoneNumberId`: the WhatsApp Flow endpoint over HTTP. The raw
 * body goes to {@link FlowEndpoint} untouched (its signature is over those bytes); the answer is
 * the encrypted reply as `text/plain`, or an error status with a JSON reason.
 */
import express, { type Request, type Response, type Router } from 'express';
import { errorInfo, type Logger } from '../log.js';
import { FLOW_SIGNATURE_HEADER } from '../flows/signature.js';
import type { FlowEndpoint } from '../flows/endpoint.js';
import { DEFAULT_MAX_BODY_BYTES, rawBodyReader } from './body.js';
import { WebhookError } from './errors.js';

/** What {@link createFlowsRouter} takes. */
export interface FlowsRouterOptions {
  readonly endpoint: FlowEndpoint;
  /** The largest body accepted (default 1 MiB). */
  readonly maxBodyBytes?: number | undefined;
  readonly logger?: Logger | undefined;
}

/** The Flow endpoint's routes. */
export function createFlowsRouter(o: FlowsRouterOptions): Router {
  const router = express.Router();
  const read = rawBodyReader(o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  const handle = async (req: Request, res: Response, phoneNumberId: string | undefined): Promise<void> => {
    let raw: Buffer;
    try {
      raw = await read(req, res);
    } catch (err) {
      const status = err instanceof WebhookError ? err.status : 400;
      res.status(status).json({ error: err instanceof Error ? err.message : 'unreadable body' });
      return;
    }
    const header = req.headers[FLOW_SIGNATURE_HEADER];
    const answer = await o.endpoint.answer({ raw, signature: typeof header === 'string' ? header : undefined, phoneNumberId });
    res.status(answer.status).type(answer.contentType).send(answer.body);
  };
  const route = (pick: (req: Request) => string | undefined) => (req: Request, res: Response) => {
    handle(req, res, pick(req)).catch((err: unknown) => {
      o.logger?.error({ err: errorInfo(err) }, 'the Flow endpoint route failed');
      if (!res.headersSent) res.status(500).json({ error: 'the Flow endpoint failed; see the server log' });
    });
  };
  router.post(
    '/flows',
    route(() => undefined),
  );
  router.post(
    '/flows/:phoneNumberId',
    route((req) => String(req.params['phoneNumberId'])),
  );
  return router;
}
