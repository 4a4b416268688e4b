export * from './bot.js';
export * from './clock.js';
export * from './events.js';
export * from './runtime.js';
export { say, SAY_EVENT, type SayEvent, type SayInput } from './say.js';
export type { SendOptions } from './sends.js';
export type { WorkOptions } from './worker.js';
export type { SmsSettings } from './outbound.js';
