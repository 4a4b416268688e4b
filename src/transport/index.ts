/** The send transport: the adapter contract, its HTTP implementation and the pieces it is made of. */
export * from './types.js';
export { createHttpAdapter, MESSAGING_PATH, SMS_PATH, type ClientCredentials, type HttpAdapterOptions, type TokenSource } from './adapter.js';
export { OAuthTokenProvider, staticToken, type AuthMethod, type OAuthTokenOptions, type TokenProvider } from './token.js';
export { HttpClient, type HttpClientOptions, type HttpPoster, type HttpRequest, type HttpResponse, type Target } from './http.js';
export { classifyInteractive, classifySms, providerIdOf, type Classifier, type Verdict } from './channels.js';
export { DEFAULT_RETRY, backoffDelay, parseRetryAfter, type RetryOptions, type RetryPolicy } from './retry.js';
export { systemClock } from './clock.js';
export type { ObserverOptions } from './log.js';
export { withPacing, type PacingOptions } from './pacing.js';
export { isProvider, type FailureClass, type Provider, type ProviderAddress, type ProviderFeatures, type ReadReceipt } from './provider.js';
export { asSeedProvider, seedRequest, SEED_FEATURES } from './seed.js';
export * from './cloud-api/index.js';
