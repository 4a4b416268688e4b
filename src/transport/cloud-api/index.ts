/** Meta's WhatsApp Cloud API as a provider: the factory, its options, the body schemas and the error classifier. */
export { createCloudApiProvider, type CloudApiProviderOptions } from './provider.js';
export { DEFAULT_SEND_RATE, DEFAULT_TOKEN_NAME, type CloudApiNumber } from './numbers.js';
export { toCloudMessage } from './body.js';
export { CLOUD_LIMITS, CloudMessageSchema, type CloudInteractive, type CloudMessage } from './schema.js';
export { classifyCloud, type CloudVerdict } from './classify.js';
export { PAIR_RATE_BACKOFF_MS, THROUGHPUT_BACKOFF_MS, type PaceSettings } from './pace.js';
