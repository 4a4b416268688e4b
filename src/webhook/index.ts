/** The webhook: an Express router that takes the provider's inbound traffic into the runtime. */
export { createWebhookRouter, type WebhookRouterOptions } from './router.js';
export { WebhookError, type ErrorBody } from './errors.js';
export { DEFAULT_MAX_BODY_BYTES, SIGNATURE_HEADER } from './body.js';
export { BotNumbers, digitsOf } from './numbers.js';
export { envelopeSchema, smsSchema, messageSchema, statusSchema, parseResponseJson, type Envelope, type InboundSmsBody, type CloudMessage, type CloudStatus, type FlowAnswer } from './schema.js';
export { startHttpServer, type HttpServer, type HttpServerOptions } from './server.js';
