import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBot, loadBots } from '../src/cli/load.js';
import { ConfigError } from '../src/index.js';

const fixture = (name: string) => join(import.meta.dirname, 'fixtures', name);

describe('loading bot files', () => {
  it('a message built when the module loads is reported with its issues and what to do', async () => {
    const err = await loadBot(fixture('load/static-invalid-bot.ts')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain('static-invalid-bot.ts: a message built when the module loads is invalid; build it inside say(() => …) so the error names its state:');
    expect((err as Error).message).toContain('listMessages.sections[0].messages[0].title: must be at most 24 characters (has 38)');
  });

  it('a folder stands for its bot files; a missing path is named', async () => {
    const bots = await loadBots([join(import.meta.dirname, '..', 'bots')]);
    expect(bots.map((b) => b.id)).toEqual(expect.arrayContaining(['appointments', 'pizza', 'support']));
    await expect(loadBots(['no/such/folder'])).rejects.toThrow('bots: no such file or folder: no/such/folder');
  });
});
