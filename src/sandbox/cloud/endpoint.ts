/**
 * `POST /cloud/{version}/{phone_number_id}/messages`: checks a request as the Cloud API does (token,
 * number, JSON, the message reference's shapes and limits, templates, the 24-hour window) and
 * accepts it, or answers in the Graph API's error shape.
 */
import { randomBytes } from 'node:crypto';
import { formatPath } from '../../errors.js';
import type { Faults } from '../faults.js';
import { bearerToken, isJson } from '../http.js';
import type { Recorder } from '../recorder.js';
import type { IncomingRequest, Reply, SandboxClock } from '../types.js';
import { graphError, invalidBody, issuesOf } from './graph-error.js';
import { shapeOf } from './messages.js';
import { checkTemplate } from './template-check.js';
import type { CloudApiSettings, SandboxNumber } from './types.js';
import type { Windows } from './window.js';

/** An error a `failed` status will carry. */
export interface StatusError {
  readonly code: number;
  readonly message?: string | undefined;
  readonly details?: string | undefined;
}

/** What the Cloud API endpoint works with. */
export interface CloudDeps {
  readonly settings: CloudApiSettings;
  readonly windows: Windows;
  readonly recorder: Recorder;
  readonly faults: Faults;
  readonly clock: SandboxClock;
}

/** An answer, and what happens once it is sent: the statuses of an accepted message. */
export interface CloudReply extends Reply {
  readonly after?: { readonly id: string; readonly to: string; readonly number: SandboxNumber; readonly failed?: StatusError } | undefined;
}

const VERSION = /^v[0-9]+\.[0-9]+$/;

/** Handles one request to the messages endpoint of `phoneNumberId`. */
export function handleCloud(request: IncomingRequest, version: string, phoneNumberId: string, deps: CloudDeps): CloudReply {
  const number = deps.settings.numbers.find((n) => n.phoneNumberId === phoneNumberId);
  const refused = tokenRefusal(request, number, deps.settings);
  if (refused !== undefined) return refused;
  if (!VERSION.test(version)) return graphError(100, { details: `"${version}" is not a Graph API version (like v23.0)`, subcode: 2500 });
  if (number === undefined) {
    const details = `Unsupported post request. Object with ID '${phoneNumberId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`;
    return graphError(100, { subcode: 33, details });
  }
  if (!isJson(request.mediaType)) return graphError(100, { details: `Content-Type must be application/json (got ${request.mediaType || 'none'})` });
  if (request.jsonError !== undefined) return graphError(100, { details: `The request body is not valid JSON: ${request.jsonError}` });
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return graphError(100, { details: '(root): the body must be a JSON object' });
  return handleBody(body as Record<string, unknown>, number, deps);
}

function tokenRefusal(request: IncomingRequest, number: SandboxNumber | undefined, settings: CloudApiSettings): Reply | undefined {
  const token = bearerToken(request.headers);
  const accepted = number === undefined ? [settings.token, ...settings.numbers.flatMap((n) => n.token ?? [])] : [number.token ?? settings.token];
  if (token !== undefined && accepted.includes(token)) return undefined;
  const details = token === undefined ? 'An access token is required to request this resource.' : 'Invalid OAuth access token - Cannot parse access token';
  const headers = { 'www-authenticate': `OAuth "Facebook Platform" "invalid_token" "${details}"` };
  return graphError(190, { message: token === undefined ? details : 'Invalid OAuth access token - Cannot parse access token', details, headers });
}

function handleBody(body: Record<string, unknown>, number: SandboxNumber, deps: CloudDeps): CloudReply {
  const shape = shapeOf(body);
  if (!('schema' in shape)) return graphError(100, { details: `${formatPath(shape.path)}: ${shape.message}` });
  const parsed = shape.schema.safeParse(body);
  if (!parsed.success) {
    const { issues, classes } = issuesOf(parsed.error, body);
    return invalidBody(issues, classes);
  }
  if (shape.kind === 'read') return read(body, number, deps);
  const to = body['to'] as string;
  if (shape.kind === 'template') {
    const checked = checkTemplate(body['template'] as Parameters<typeof checkTemplate>[0], deps.settings.templates);
    if ('refusal' in checked) return checked.refusal;
  }
  return refusal(to, deps) ?? faulted(body, shape.kind, number, deps) ?? windowed(body, shape.kind, number, deps) ?? accept(body, shape.kind, number, deps);
}

function read(body: Record<string, unknown>, number: SandboxNumber, deps: CloudDeps): Reply {
  const messageId = body['message_id'] as string;
  const typing = body['typing_indicator'] !== undefined;
  deps.recorder.addRead({ numberId: number.phoneNumberId, messageId, user: deps.windows.userOf(messageId), typing, at: deps.clock.now() });
  return { status: 200, body: { success: true } };
}

/** A recipient refused with `faults.refuseInteractive`, answered in the Graph shape. */
function refusal(to: string, deps: CloudDeps): Reply | undefined {
  const r = deps.faults.refusalFor(to);
  if (r === undefined) return undefined;
  const e = (r.body as { error: { code: number; message: string; error_data: { details: string } } }).error;
  return graphError(e.code, { status: r.status, message: `(#${e.code}) ${e.message}`, details: e.error_data.details, fault: 'refused' });
}

function faulted(body: Record<string, unknown>, kind: string, number: SandboxNumber, deps: CloudDeps): CloudReply | undefined {
  const f = deps.faults.takeCloudError(body['to'] as string);
  if (f === undefined) return undefined;
  if (f.kind === 'sync') return f.reply;
  return { ...accept(body, kind, number, deps, { code: f.code, message: f.message, details: f.details }), fault: 'cloud-error' };
}

/** A free-form message to a user whose window with this number is closed. */
function windowed(body: Record<string, unknown>, kind: string, number: SandboxNumber, deps: CloudDeps): CloudReply | undefined {
  if (kind === 'template') return undefined;
  const to = body['to'] as string;
  if (deps.windows.state(to, number.phoneNumberId).open) return undefined;
  if (deps.settings.windowErrors === 'sync') return graphError(131047);
  return accept(body, kind, number, deps, { code: 131047 });
}

/** Accepts a message: records it (unless it is to fail later) and answers its wamid. */
function accept(body: Record<string, unknown>, kind: string, number: SandboxNumber, deps: CloudDeps, failed?: StatusError): CloudReply {
  const to = body['to'] as string;
  const id = `wamid.${randomBytes(18).toString('base64url')}`;
  if (failed === undefined) {
    deps.recorder.addMessage({ channel: 'cloud-api', numberId: number.phoneNumberId, from: number.displayNumber, to, type: kind, request: body, providerId: id, at: deps.clock.now() });
  }
  const message = kind === 'template' ? { id, message_status: 'accepted' } : { id };
  const answer = { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to }], messages: [message] };
  return { status: 200, body: answer, after: { id, to, number, ...(failed !== undefined && { failed }) } };
}
