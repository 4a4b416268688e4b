/**
 * The statuses of accepted messages, posted to the webhook after the send was answered, one at a
 * time in order: `sent` then `delivered`, or `failed` with its error.
 */
import type { CloudError, DeliveryStatus } from '../inbound.js';
import type { StatusError } from './endpoint.js';
import { defaultDetails, titleOf } from './graph-error.js';
import type { SandboxNumber } from './types.js';

/** Posts one status; the sandbox's deliverer. */
export type PostStatus = (id: string, status: DeliveryStatus, options: { recipient: string; to: string; errors?: readonly CloudError[] }) => Promise<unknown>;

/** What a status queue needs. */
export interface StatusQueueDeps {
  readonly post: PostStatus;
  /** Whether a webhook is set (no webhook: nothing to post to). */
  readonly hasWebhook: () => boolean;
  /** Post `sent` and `delivered` for accepted messages (failures are always posted). */
  readonly enabled: boolean;
}

/** Posts statuses in order; a delivery that fails is reported as a warning and skipped. */
export class StatusQueue {
  readonly #deps: StatusQueueDeps;
  #tail: Promise<void> = Promise.resolve();

  constructor(deps: StatusQueueDeps) {
    this.#deps = deps;
  }

  /** Queues the statuses of one answered message. */
  push(m: { readonly id: string; readonly to: string; readonly number: SandboxNumber; readonly failed?: StatusError | undefined }): void {
    if (!this.#deps.hasWebhook()) return;
    const base = { recipient: m.to, to: m.number.displayNumber };
    if (m.failed !== undefined) {
      this.#then(m.id, 'failed', { ...base, errors: [cloudError(m.failed)] });
    } else if (this.#deps.enabled) {
      this.#then(m.id, 'sent', base);
      this.#then(m.id, 'delivered', base);
    }
  }

  /** Resolves once every status queued so far was posted (or failed to be). */
  idle(): Promise<void> {
    return this.#tail;
  }

  #then(id: string, status: DeliveryStatus, options: Parameters<PostStatus>[2]): void {
    this.#tail = this.#tail.then(async () => {
      try {
        await this.#deps.post(id, status, options);
      } catch (err) {
        process.emitWarning(`The sandbox could not post the ${status} status of ${id}: ${err instanceof Error ? err.message : String(err)}`, { code: 'COLLOQUY_SANDBOX_STATUS' });
      }
    });
  }
}

/** A `failed` status's error, as Meta writes it. */
export function cloudError(e: StatusError): CloudError {
  const title = titleOf(e.code);
  return { code: e.code, title, message: e.message ?? title, error_data: { details: e.details ?? defaultDetails(e.code) } };
}
