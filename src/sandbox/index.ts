/** The sandbox provider: a strict fake of the provider for tests, the simulator and `colloquy serve`. */
export type { Sandbox } from './api.js';
export * from './constants.js';
export { Deliverer, smsUrlOf, type DeliveryResult, type MessageOptions } from './deliver.js';
export type { DeliverRequest } from './control-deliver.js';
export { SANDBOX_TEMPLATES, placeholders, renderTemplate, type RenderedTemplate } from './cloud/templates.js';
export { CLOUD_ERROR_CODES } from './cloud/graph-error.js';
export type { TemplateRequest as CloudTemplateRequest } from './cloud/messages.js';
export type * from './cloud/types.js';
export { Faults, type CloudErrorInit, type CloudFault, type FailInit, type FaultsSnapshot, type LatencyInit, type RateLimitInit, type RefusalInit, type SmsErrorInit } from './faults.js';
export * from './inbound.js';
export { createSandbox } from './sandbox.js';
export { startSandbox, type RunningSandbox, type StartSandboxOptions } from './server.js';
export type { TokenGrant } from './tokens.js';
export type * from './types.js';
