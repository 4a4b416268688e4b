/**
 * A small digest of everything the agents' inbox shows about open handoffs, read from the store, so
 * a process can tell that another process on the same database changed something (claimed,
 * released, a user's message held for the agent, a handoff that timed out) without being told:
 * the inbox's event stream compares it every few seconds while streams are open.
 */
import { createHash } from 'node:crypto';
import type { Store } from '../store/types.js';

/**
 * The digest: each open handoff's record (state, holder, deadlines), its conversation's version
 * (every turn) and last activity (every message the user writes, held for the agent or not), and
 * the id of its last handoff log line (every claim, agent's message, note, release, expiry). One
 * query for the open handoffs and two per open handoff: cheap for a helpdesk's queue, and run only
 * while someone watches.
 */
export async function handoffFingerprint(store: Store): Promise<string> {
  const open = await store.openHandoffs();
  const parts = await Promise.all(
    open.map(async (h) => {
      const [c, log] = await Promise.all([store.conversation(h.conversationId), store.handoffLog(h.conversationId)]);
      return [h, c?.version, c?.updatedAt, c?.lastActivityAt, c?.status, log.at(-1)?.id];
    }),
  );
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}
