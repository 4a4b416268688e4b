/**
 * What a custom SMS fallback policy is asked. A leaf module: a bot's options name it and the
 * fallback decides with it, so neither has to import the other.
 */
import type { Message } from '../messages/message.js';

/** The Meta codes that mean the interactive channel cannot reach this user now. */
export const UNREACHABLE_CODES: readonly number[] = [131047, 131026];

/** Why a message is falling back. */
export type FallbackTrigger = 'permanent' | 'retries-exhausted' | 'failed-status';

/** What a custom policy is asked. */
export interface FallbackInfo {
  readonly trigger: FallbackTrigger;
  readonly status?: number | undefined;
  readonly code?: string | number | undefined;
  readonly reason: string;
  readonly message: Message;
}
