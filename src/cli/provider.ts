/** The provider a command talks to: the real one from the environment, or an in-process sandbox. */
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { providerOptions } from '../server.js';
import { SANDBOX_SENDER, startSandbox, type RunningSandbox } from '../sandbox/index.js';
import { createHttpAdapter } from '../transport/index.js';
import type { SendAdapter, TransportEvent } from '../transport/types.js';

/** An adapter, the sender to use, and the sandbox when there is one. */
export interface Provider {
  readonly adapter: SendAdapter;
  readonly sender: string;
  readonly sandbox: RunningSandbox | undefined;
  close(): Promise<void>;
}

/** Opens the configured provider; with none configured, starts a sandbox on a free loopback port. */
export async function openProvider(config: Config, logger: Logger, onEvent?: (e: TransportEvent) => void): Promise<Provider> {
  const extra = { logger, ...(onEvent && { onEvent }) };
  if (config.provider.kind !== 'sandbox') {
    const adapter = createHttpAdapter({ ...providerOptions(config, undefined), ...extra });
    return { adapter, sender: config.sender!, sandbox: undefined, close: () => adapter.close() };
  }
  const sandbox = await startSandbox({ port: 0 });
  const adapter = createHttpAdapter({ ...providerOptions(config, sandbox.url), ...extra });
  return {
    adapter,
    sender: config.sender ?? SANDBOX_SENDER,
    sandbox,
    close: async () => {
      await adapter.close();
      await sandbox.close();
    },
  };
}
