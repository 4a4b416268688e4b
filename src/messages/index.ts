export * from './builders.js';
export * from './limits.js';
export * from './message.js';
export * from './request.js';
export * from './schema.js';
export * from './validate.js';
export * from './gsm.js';
export * from './sms.js';
