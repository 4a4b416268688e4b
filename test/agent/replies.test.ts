/** The inbox's canned replies file (COLLOQUY_AGENT_REPLIES_FILE): read, checked at start, picked per queue. */
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { loadRepliesFile, repliesFor } from '../../src/agent/replies.js';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { tempDir } from '../support/temp.js';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function file(content: string): string {
  const d = tempDir('replies');
  dirs.push(d);
  const path = d.path('replies.json');
  writeFileSync(path, content);
  return path;
}

function startError(content: string): ConfigError {
  try {
    loadConfig({ COLLOQUY_AGENT_REPLIES_FILE: file(content) });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('the start did not stop');
}

describe('canned replies', () => {
  it('loads at start; a queue gets its own replies, then every queue\u2019s', () => {
    const path = file(JSON.stringify({ queues: { billing: [{ title: 'Refund', text: 'Your refund is on its way.' }], '*': [{ title: 'Hello', text: 'Hi, how can I help?' }] } }));
    const replies = loadConfig({ COLLOQUY_AGENT_REPLIES_FILE: path }).agentReplies;
    expect(repliesFor(replies, 'billing').map((r) => r.title)).toEqual(['Refund', 'Hello']);
    expect(repliesFor(replies, 'wifi').map((r) => r.title)).toEqual(['Hello']);
    expect(repliesFor(replies, undefined).map((r) => r.title)).toEqual(['Hello']);
    expect(repliesFor(undefined, 'billing')).toEqual([]);
    expect(loadConfig({}).agentReplies).toBeUndefined();
  });

  it('a bad file stops the start, naming the variable and every bad field', () => {
    const e = startError(
      JSON.stringify({
        queues: {
          billing: [
            { title: '', text: 'x' },
            { title: 'Ok', text: 'y'.repeat(4097) },
          ],
          wifi: [{ title: 'Hi' }],
        },
      }),
    );
    expect(e.variable).toBe('COLLOQUY_AGENT_REPLIES_FILE');
    expect(e.message).toMatch(/^COLLOQUY_AGENT_REPLIES_FILE: /);
    expect(e.message).toContain('queues.billing[0].title: must not be empty');
    expect(e.message).toContain('queues.billing[1].text: must be at most 4096 characters');
    expect(e.message).toContain('queues.wifi[0].text');
    expect(startError('{"queues": {"billing": {"title": "x"}}}').message).toContain('queues.billing: must be a list of replies');
    expect(startError('{"replies": []}').message).toMatch(/queues|replies/);
    expect(startError(JSON.stringify({ queues: { billing: [{ title: 'a', text: 'b', extra: 1 }] } })).message).toContain('queues.billing[0]');
  });

  it('a file that is missing or not JSON stops the start too', () => {
    expect(() => loadRepliesFile('/nonexistent/replies.json')).toThrow(/COLLOQUY_AGENT_REPLIES_FILE: cannot read the canned replies file \/nonexistent\/replies.json \(no such file\)/);
    expect(startError('{ not json').message).toMatch(/COLLOQUY_AGENT_REPLIES_FILE: the canned replies file .* is not valid JSON/);
  });
});
