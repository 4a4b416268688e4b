/** Several numbers in one deployment: the numbers file (COLLOQUY_NUMBERS_FILE), loaded and checked. */
export { DEFAULT_NUMBER_SEND_RATE, type NumberConfig, type NumbersConfig } from './types.js';
export { MAX_NUMBER_SEND_RATE, MAX_USER_PACE_MS } from './schema.js';
export { NUMBERS_FILE_VARIABLE, NumbersFileError, checkNumberBots, loadNumbersFile, parseNumbers, type Env, type ParseNumbersOptions } from './parse.js';
