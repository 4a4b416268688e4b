/**
 * What a test harness runs on: the real runtime with a store (`:memory:` SQLite unless `database` names another), a manual clock,
 * and a sandbox provider reached over real HTTP on 127.0.0.1 through the real send adapter.
 */
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../conversation/clock.js';
import type { Bot } from '../conversation/bot.js';
import type { SendOptions } from '../conversation/sends.js';
import type { SmsSettings } from '../conversation/outbound.js';
import { Runtime } from '../conversation/runtime.js';
import { silentLogger, type Logger } from '../log.js';
import type { Sandbox } from '../sandbox/api.js';
import { SANDBOX_CLOUD_API_TOKEN, SANDBOX_CLOUD_API_VERSION, SANDBOX_PATHS, SANDBOX_PHONE_NUMBER_ID, SANDBOX_SENDER } from '../sandbox/constants.js';
import { startSandbox, type RunningSandbox } from '../sandbox/server.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/types.js';
import { createHttpAdapter } from '../transport/adapter.js';
import { createCloudApiProvider } from '../transport/cloud-api/provider.js';
import { systemClock } from '../transport/clock.js';
import { seedConversation, type OlderConversation } from './seed.js';
import type { SendAdapter } from '../transport/types.js';

/** Options of `createTestBot()`. All optional. */
export interface TestBotOptions {
  /** The user's number (default `15551230001`). */
  readonly user?: string | undefined;
  /** Where the manual clock starts (default 2026-01-01 12:00 UTC). */
  readonly now?: number | Date | undefined;
  /** The default `from` number (a bot's own `sender` wins; default the sandbox's). */
  readonly sender?: string | undefined;
  /** SMS body settings (country, dial, mask). */
  readonly sms?: SmsSettings | undefined;
  /** Where the runtime logs (default nowhere). */
  readonly logger?: Logger | undefined;
  /** How sends are retried; a message put back for a later attempt waits for `advance()`. */
  readonly sends?: SendOptions | undefined;
  /** @deprecated The old name of `sends`. */
  readonly dispatcher?: SendOptions | undefined;
  /**
   * Start from a conversation an older version of the bot stored (its snapshot and version): the
   * user's first action loads it as the runtime would after a deploy, migrations and all.
   */
  readonly from?: OlderConversation | undefined;
  /** The database to run on: a SQLite path, `:memory:` (the default) or a PostgreSQL URL of an empty database. */
  readonly database?: string | undefined;
  /**
   * The provider the bot talks to: the seed provider's (the default) or the Cloud API's, each played
   * by the sandbox. On the Cloud API text is WhatsApp text, templates go, users' messages are marked
   * read, and the 24-hour window is kept on the harness's clock (`advance()` past it to close it).
   */
  readonly provider?: 'seed' | 'cloud-api' | undefined;
  /**
   * How long an agent's claim lasts without the agent's activity before the handoff goes back to
   * the queue (ms; default 30 minutes, as `COLLOQUY_HANDOFF_CLAIM_IDLE_MS`; 0: never), on the
   * harness's clock: `advance()` past it to see the claim expire.
   */
  readonly handoffClaimIdleMs?: number | undefined;
}

/** The default user number of a harness. */
export const DEFAULT_TEST_USER = '15551230001';

/** Something that re-reads its view of the store after each action. */
export interface WorldView {
  refresh(): Promise<void>;
}

/** A running runtime with everything it needs, for one bot. */
export class HarnessWorld {
  readonly views = new Set<WorldView>();
  #inbound = 0;
  /** Ids of inbounds on a database another run may have written to (a file, PostgreSQL) carry this run's tag, so they are never taken for its redeliveries. */
  #tag = '';
  #closed: Promise<void> | undefined;

  private constructor(
    readonly bot: Bot,
    readonly runtime: Runtime,
    readonly store: Store,
    readonly clock: ManualClock,
    private readonly adapter: SendAdapter,
    private readonly server: RunningSandbox,
    /** The Cloud API phone_number_id the bot answers on (undefined on the seed provider). */
    readonly numberId?: string | undefined,
  ) {}

  /** Starts the pieces and the runtime. */
  static async start(bot: Bot, o: TestBotOptions = {}): Promise<HarnessWorld> {
    const clock = new ManualClock(o.now === undefined ? undefined : +o.now);
    const cloud = o.provider === 'cloud-api';
    const sender = bot.options.sender ?? o.sender ?? SANDBOX_SENDER;
    const numberId = bot.options.phoneNumberId ?? SANDBOX_PHONE_NUMBER_ID;
    const server = await startSandbox({
      port: 0,
      host: '127.0.0.1',
      ...(cloud && { clock: { now: () => clock.now() }, sender, phoneNumberId: numberId, cloudApi: { statuses: false } }),
    });
    const quick = { baseDelayMs: 1, maxDelayMs: 5 };
    const seed = createHttpAdapter({ baseUrl: server.url, authUrl: server.url, clientId: server.sandbox.clientId, clientSecret: server.sandbox.clientSecret, retry: quick });
    const adapter = cloud
      ? createCloudApiProvider({
          baseUrl: `${server.url}${SANDBOX_PATHS.cloud}/${SANDBOX_CLOUD_API_VERSION}`,
          token: SANDBOX_CLOUD_API_TOKEN,
          numbers: [{ numberId, displayNumber: sender }],
          defaultNumberId: numberId,
          // Pauses for 130429 and 131056 are on the harness's clock and go back to the outbox to wait
          // there (advance()); only the quick retries of a transient error wait, in real time.
          retry: { ...quick, maxRetryAfterMs: 0 },
          clock: { now: () => clock.now(), sleep: (ms, signal) => systemClock.sleep(ms, signal) },
          sms: seed,
        })
      : seed;
    let store: Store;
    try {
      store = await openStore(o.database ?? ':memory:');
    } catch (err) {
      await Promise.allSettled([adapter.close(), server.close()]);
      throw err;
    }
    if (o.from) await seedConversation(store, { botId: bot.id, user: o.user ?? DEFAULT_TEST_USER }, o.from, clock.now());
    const runtime = new Runtime({
      store,
      adapter,
      bots: [bot],
      sender: o.sender ?? SANDBOX_SENDER,
      sms: o.sms,
      clock,
      logger: o.logger ?? silentLogger,
      sends: { baseDelayMs: 1000, ...o.dispatcher, ...o.sends },
      handoffClaimIdleMs: o.handoffClaimIdleMs,
    });
    try {
      await runtime.start();
    } catch (err) {
      await Promise.allSettled([runtime.stop(), adapter.close(), store.close(), server.close()]);
      throw err;
    }
    const world = new HarnessWorld(bot, runtime, store, clock, adapter, server, cloud ? numberId : undefined);
    if (o.database !== undefined) world.#tag = `.${randomBytes(4).toString('hex')}.`;
    return world;
  }

  /**
   * What a user's WhatsApp message carries besides its event: on the Cloud API, the number it was
   * written to (as the webhook keeps it), and the sandbox learns that the user wrote (the window opens).
   */
  inboundRaw(user: string, providerId: string): unknown {
    if (this.numberId === undefined) return undefined;
    this.sandbox.userWrote(user, providerId, this.numberId);
    return { id: providerId, from: user, metadata: { phone_number_id: this.numberId, display_phone_number: this.sandbox.sender } };
  }

  /** The sandbox this harness sends to (its own: faults injected here touch no other harness). */
  get sandbox(): Sandbox {
    return this.server.sandbox;
  }

  /** The sequence number of the last message the sandbox accepted (0 for none). */
  lastSeq(): number {
    return this.sandbox.messages.at(-1)?.seq ?? 0;
  }

  /** A fresh provider message id for an inbound. */
  nextProviderId(): string {
    return `wamid.harness${this.#tag}${++this.#inbound}`;
  }

  /**
   * Waits until turns, sends and timers are settled, lets promises a turn started (an invoked
   * actor) run for one more tick, waits again, then refreshes every view.
   */
  async settle(): Promise<void> {
    await this.runtime.idle();
    await new Promise((resolve) => setImmediate(resolve));
    await this.runtime.idle();
    for (const v of this.views) await v.refresh();
  }

  /** Stops the runtime and frees the store, the adapter and the sandbox. Safe to call twice. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      await this.runtime.stop();
      await this.adapter.close();
      await this.store.close();
      await this.server.close();
    })();
    return this.#closed;
  }
}
