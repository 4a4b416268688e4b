/** `colloquy chat` in a real terminal: tmux gives it a pseudo-terminal; we type and read the screen. */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SESSION = `colloquy-chat-${process.pid}`;

function tmux(...args: string[]): string {
  try {
    return execFileSync('tmux', args, { encoding: 'utf8' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('tmux is not installed: apt-get install -y tmux (.ci/run installs it)');
    throw err;
  }
}

const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-200', '-t', SESSION);

function waitFor(text: string | RegExp): Promise<string> {
  return eventually(
    () => {
      const s = screen();
      if (!(typeof text === 'string' ? s.includes(text) : text.test(s))) throw new Error(`the screen shows:\n${s}`);
      return s;
    },
    { what: `the screen showing ${String(text)}`, timeoutMs: 15_000, intervalMs: 50 },
  );
}

async function type(line: string): Promise<void> {
  tmux('send-keys', '-t', SESSION, '-l', line);
  tmux('send-keys', '-t', SESSION, 'Enter');
}

afterAll(() => {
  try {
    tmux('kill-session', '-t', SESSION);
  } catch {
    /* already gone */
  }
});

describe('colloquy chat under a pseudo-terminal', () => {
  it('a person taps through the pizza bot by number and by title', async () => {
    const cmd = `cd ${JSON.stringify(ROOT)} && ${JSON.stringify(process.execPath)} --conditions=colloquy-source bin/colloquy.js chat bots/pizza.ts; echo "[exited $?]"; sleep 30`;
    tmux('new-session', '-d', '-s', SESSION, '-x', '120', '-y', '50', cmd);
    await waitFor(/chat|pizza/i);
    await type('hi');
    let s = await waitFor("Luigi's Pizza");
    expect(s).toContain('1. Margherita');
    expect(s).toContain('4. Lemonade');
    await type('2');
    s = await waitFor('Pepperoni: which size?');
    expect(s).toContain('[image] https://images.example.com/pizza/pepperoni.jpg');
    await type('Large $17.60');
    s = await waitFor('Where should we deliver?');
    expect(s).toContain('[ Enter address ]');
    await type('/state');
    await waitFor('address');
    await type('/flow {"street": "Calle 5 de Mayo 12", "city": "Puebla"}');
    await waitFor('Track my order');
    await type('Track my order');
    // The lookup takes 50 ms of real time: its answer shows up by itself, no /wait, the prompt back below it.
    s = await waitFor(/is in the oven and leaves in about 15 minutes\.[\s\S]*Enjoy your meal![\s\S]*\nyou › \s*$/);
    expect(s).toContain('(in tracking, the bot is working on it: the answer shows up here when it arrives)');
    expect(s).not.toContain('(no answer)');
    await type('/quit');
    s = await waitFor('[exited 0]');
  });
});
