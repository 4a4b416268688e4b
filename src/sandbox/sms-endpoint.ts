/**
 * `POST {base_url}/services/messaging`: the SMS endpoint. Business failures come back as the
 * provider does it, `{code, hint, message}` with HTTP 200 (provider.md §1.3).
 */
import { formatPath, type Issue } from '../errors.js';
import { SmsRequestSchema, type SmsRequest } from '../messages/schema.js';
import { check } from '../messages/validate.js';
import type { EndpointDeps } from './deps.js';
import { isJson } from './http.js';
import { bearerProblem } from './messaging-endpoint.js';
import { bearerRefusal, smsFailure } from './replies.js';
import type { IncomingRequest, Reply } from './types.js';

/** The provider's "bad request format" code. */
export const SMS_BAD_FORMAT = 13;

/** Handles an SMS request. */
export function handleSms(request: IncomingRequest, deps: EndpointDeps): Reply {
  const problem = bearerProblem(request, deps);
  if (problem !== undefined) return bearerRefusal('sms', problem);
  if (!isJson(request.mediaType)) return smsFailure(SMS_BAD_FORMAT, { hint: `Content-Type must be application/json (got ${request.mediaType || 'none'})` });
  if (request.jsonError !== undefined) return smsFailure(SMS_BAD_FORMAT, { hint: `The request body is not valid JSON: ${request.jsonError}` });
  const checked = check(SmsRequestSchema, request.body);
  if (!checked.ok) return badFormat(checked.issues);
  return deps.faults.takeSmsError() ?? accept(checked.value, deps);
}

function badFormat(issues: readonly Issue[]): Reply {
  const listed = issues.map((i) => `${formatPath(i.path)}: ${i.message}`).join('; ');
  return smsFailure(SMS_BAD_FORMAT, { message: `Bad request format (${issues.length} problem${issues.length === 1 ? '' : 's'})`, hint: listed });
}

function accept(req: SmsRequest, deps: EndpointDeps): Reply {
  const mailingId = deps.nextMailingId();
  const at = deps.clock.now();
  for (const to of req.msisdns) {
    deps.recorder.addMessage({ channel: 'sms', to, text: req.message, request: req, providerId: String(mailingId), mailingId, at });
  }
  return { status: 200, body: { code: 0, mailingId, result: 'Applied' } };
}
