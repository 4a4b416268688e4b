/**
 * What the simulators read from the sandbox's Cloud API mode: the 24-hour window of a user, the
 * read receipts the bot sent, and a template as the user sees it. The window and the read marks
 * show only once the sandbox has seen Cloud API traffic, so the seed provider's chats stay as they were.
 */
import type { Sandbox } from '../sandbox/api.js';
import type { RenderedTemplate } from '../sandbox/cloud/templates.js';
import type { WindowState } from '../sandbox/cloud/types.js';
import type { AcceptedCloud, AcceptedRead } from '../sandbox/types.js';

export type { RenderedTemplate, WindowState };

const cloudSeen = new WeakSet<Sandbox>();

/** True once the sandbox has answered a Cloud API request (the bot talks to its Cloud API mode). */
export function usesCloudApi(sandbox: Sandbox): boolean {
  if (cloudSeen.has(sandbox)) return true;
  const seen = sandbox.messages.some((m) => m.channel === 'cloud-api') || sandbox.requests.some((r) => r.endpoint === 'cloud-api');
  if (seen) cloudSeen.add(sandbox);
  return seen;
}

/** The user's window with a business number (`phone_number_id` or display number), once the bot talks to the Cloud API mode; undefined before. */
export function windowOf(sandbox: Sandbox, user: string, number?: string): WindowState | undefined {
  return usesCloudApi(sandbox) ? sandbox.window(user, number) : undefined;
}

/** The read receipts the bot sent for the user's messages. */
export function readsOf(sandbox: Sandbox, user: string): readonly AcceptedRead[] {
  return sandbox.reads(user);
}

/** A template message as the user sees it, when the sandbox knows the template; undefined otherwise. */
export function renderedTemplate(sandbox: Sandbox, message: AcceptedCloud): RenderedTemplate | undefined {
  return sandbox.renderTemplate(message);
}

/** "closes in 3h 12m", "closed": the window's state for people, at `now`. */
export function windowText(w: WindowState, now: number): string {
  if (!w.open) return w.lastUserMessageAt === undefined ? 'closed: the user has not written yet; only templates reach them' : 'closed: only templates reach the user';
  if (w.closesAt === undefined) return 'open';
  const minutes = Math.max(0, Math.ceil((w.closesAt - now) / 60_000));
  return `open: closes in ${Math.floor(minutes / 60)}h ${minutes % 60}m`;
}

/** What the terminal chat says about the Cloud API side as it prints: a tick line per new read receipt, the window when it opens or closes. */
export class CloudMarks {
  /** The `seq` of the last read receipt shown. */
  #readsShown = 0;
  /** Whether the window was open when last shown; undefined before (and on the seed provider). */
  #windowOpen: boolean | undefined;

  /** Lines for the read receipts since the last call (one per message of the user the bot marked read). */
  reads(sandbox: Sandbox, user: string): string[] {
    const fresh = readsOf(sandbox, user).filter((r) => r.seq > this.#readsShown);
    if (fresh.length > 0) this.#readsShown = fresh.at(-1)!.seq;
    return fresh.map((r) => `      \u2713\u2713 read${r.typing ? ', typing\u2026' : ''}`);
  }

  /** A line when the user's window opened or closed since the last call. */
  window(sandbox: Sandbox, user: string, numberId?: string): string | undefined {
    const w = windowOf(sandbox, user, numberId);
    if (w === undefined || w.open === this.#windowOpen) return undefined;
    this.#windowOpen = w.open;
    return w.open ? '(window open: the bot can write to you freely for 24 hours after your last message)' : '(window closed: only templates can reach you)';
  }
}
