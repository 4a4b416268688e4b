/** `colloquy sandbox`: the sandbox provider on its own port, until stopped. */
import { isLoopbackHost, loadConfig } from '../config.js';
import { SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET, SANDBOX_SENDER, startSandbox } from '../sandbox/index.js';
import type { Io } from './io.js';

export async function sandboxCommand(io: Io): Promise<number> {
  const config = loadConfig(io.env);
  const controlRoutes = isLoopbackHost(config.host) || config.sandboxPublic;
  const running = await startSandbox({ port: config.port, host: config.host, controlRoutes });
  io.out(
    [
      `Sandbox provider on ${running.url}`,
      `  COLLOQUY_BASE_URL=${running.url}`,
      `  COLLOQUY_AUTH_URL=${running.url}   (POST /token)`,
      `  COLLOQUY_CLIENT_ID=${SANDBOX_CLIENT_ID}  COLLOQUY_CLIENT_SECRET=${SANDBOX_CLIENT_SECRET}  COLLOQUY_SENDER=${SANDBOX_SENDER}`,
      controlRoutes
        ? `  faults and records: ${running.url}/_sandbox/…`
        : `  faults and records: not mounted: HOST=${config.host} is not loopback and they take no authentication (set COLLOQUY_SANDBOX_PUBLIC=1 to mount them)`,
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await running.close();
  return 0;
}
