/**
 * `POST {base_url}/messaging-bsp-api-endpoint-ws/services/v1/messaging`: checks the bearer token,
 * the JSON content type and the seed's request shape with the provider's limits, then accepts.
 */
import { randomBytes } from 'node:crypto';
import { InteractiveRequestSchema, type InteractiveRequest } from '../messages/schema.js';
import { check } from '../messages/validate.js';
import type { EndpointDeps } from './deps.js';
import { bearerToken, isJson } from './http.js';
import { INVALID_PARAMETER_CODE, bearerRefusal, invalidRequest, metaError, type BearerProblem } from './replies.js';
import type { IncomingRequest, Reply } from './types.js';

/** Handles an interactive message. */
export function handleMessaging(request: IncomingRequest, deps: EndpointDeps): Reply {
  const problem = bearerProblem(request, deps);
  if (problem !== undefined) return bearerRefusal('messaging', problem);
  if (!isJson(request.mediaType)) return metaError(415, INVALID_PARAMETER_CODE, `Content-Type must be application/json (got ${request.mediaType || 'none'})`);
  if (request.jsonError !== undefined) return metaError(400, INVALID_PARAMETER_CODE, `The request body is not valid JSON: ${request.jsonError}`);
  const checked = check(InteractiveRequestSchema, request.body);
  if (!checked.ok) return invalidRequest(checked.issues);
  if (deps.senders !== undefined && !deps.senders.has(checked.value.from)) {
    return invalidRequest([{ path: ['from'], message: `"${checked.value.from}" is not a sender number of this account` }]);
  }
  return deps.faults.refusalFor(checked.value.to) ?? accept(checked.value, deps);
}

function accept(req: InteractiveRequest, deps: EndpointDeps): Reply {
  const id = `wamid.${randomBytes(18).toString('base64url')}`;
  deps.recorder.addMessage({ channel: 'interactive', from: req.from, to: req.to, request: req, providerId: id, at: deps.clock.now() });
  return { status: 200, body: { messaging_product: 'whatsapp', contacts: [{ input: req.to, wa_id: req.to }], messages: [{ id }] } };
}

/** What is wrong with the request's bearer token, if anything. */
export function bearerProblem(request: IncomingRequest, deps: EndpointDeps): BearerProblem | undefined {
  const token = bearerToken(request.headers);
  if (token === undefined) return 'missing';
  const state = deps.tokens.check(token);
  return state === 'valid' ? undefined : state;
}
