/**
 * Who wrote to which business number and when: the 24-hour customer service window, and the ids
 * of the users' messages (so a read receipt can name its user).
 */
import type { SandboxClock } from '../types.js';
import type { WindowState } from './types.js';

/** A user message seen in a webhook payload the sandbox delivered. */
export interface SeenInbound {
  readonly user: string;
  readonly numberId: string;
  readonly id: string;
}

/** The windows and inbound ids, by the sandbox's clock. */
export class Windows {
  readonly #last = new Map<string, number>();
  readonly #users = new Map<string, string>();
  readonly #clock: SandboxClock;
  readonly #windowMs: number;
  readonly #max: number;

  constructor(clock: SandboxClock, windowMs: number, max: number) {
    this.#clock = clock;
    this.#windowMs = windowMs;
    this.#max = max;
  }

  /** Notes that `user` wrote to `numberId` now (the window opens or restarts). */
  wrote(m: SeenInbound): void {
    const k = key(m.user, m.numberId);
    this.#last.delete(k);
    this.#last.set(k, this.#clock.now());
    if (this.#last.size > this.#max) this.#last.delete(this.#last.keys().next().value as string);
    this.#users.set(m.id, m.user);
    if (this.#users.size > this.#max) this.#users.delete(this.#users.keys().next().value as string);
  }

  /** The window between `user` and `numberId` now. */
  state(user: string, numberId: string): WindowState {
    const last = this.#last.get(key(user, numberId));
    if (last === undefined) return { open: false };
    const closesAt = last + this.#windowMs;
    return { open: this.#clock.now() < closesAt, lastUserMessageAt: last, closesAt };
  }

  /** Every user and number with a window (open or closed), most recent last. */
  all(): (WindowState & { readonly user: string; readonly numberId: string })[] {
    return [...this.#last.keys()].map((k) => {
      const [numberId, user] = k.split('\u0000') as [string, string];
      return { user, numberId, ...this.state(user, numberId) };
    });
  }

  /** The user who sent an inbound message the sandbox delivered. */
  userOf(messageId: string): string | undefined {
    return this.#users.get(messageId);
  }
}

function key(user: string, numberId: string): string {
  return `${numberId}\u0000${user}`;
}

/** The user messages in a Cloud API webhook payload (any shape; what does not fit is skipped). */
export function inboundOf(payload: unknown): SeenInbound[] {
  const out: SeenInbound[] = [];
  for (const entry of arrayAt(payload, 'entry')) {
    for (const change of arrayAt(entry, 'changes')) {
      const value = objectAt(change, 'value');
      const numberId = objectAt(value, 'metadata')?.['phone_number_id'];
      if (typeof numberId !== 'string') continue;
      for (const m of arrayAt(value, 'messages')) {
        const o = m as Record<string, unknown>;
        if (typeof o['from'] === 'string' && typeof o['id'] === 'string') out.push({ user: o['from'], numberId, id: o['id'] });
      }
    }
  }
  return out;
}

function objectAt(v: unknown, key: string): Record<string, unknown> | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const x = (v as Record<string, unknown>)[key];
  return typeof x === 'object' && x !== null ? (x as Record<string, unknown>) : undefined;
}

function arrayAt(v: unknown, key: string): unknown[] {
  if (typeof v !== 'object' || v === null) return [];
  const x = (v as Record<string, unknown>)[key];
  return Array.isArray(x) ? x : [];
}
