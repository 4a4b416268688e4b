/**
 * The agents' inbox as a team runs it: `colloquy agents add` prints a token, `colloquy serve` says
 * where the inbox is, the inbox refuses a browser without a session and signs the agent in with the
 * token; a canned replies file that cannot be used stops the start, naming the variable and field.
 */
import { writeFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';
import { run, serve } from './cli.js';

const tmp = tempDir();
afterAll(() => tmp.remove());
const started: { stop: (s?: NodeJS.Signals) => Promise<number | null>; proc: { exitCode: number | null } }[] = [];
afterEach(async () => {
  for (const s of started.splice(0)) if (s.proc.exitCode === null) await s.stop('SIGKILL');
});

describe('the inbox of colloquy serve', () => {
  it('an agent added with the command signs in with the token it printed', { timeout: 60_000 }, async () => {
    const db = tmp.path('inbox.db');
    const replies = tmp.path('replies.json');
    writeFileSync(replies, JSON.stringify({ queues: { '*': [{ title: 'Hello', text: 'Hi, how can I help?' }] } }));
    const migrated = await run(['migrate'], { COLLOQUY_DATABASE_URL: db });
    expect(migrated.code).toBe(0);
    const added = await run(['agents', 'add', 'ana', '--json'], { COLLOQUY_DATABASE_URL: db });
    expect(added.code).toBe(0);
    const { token } = JSON.parse(added.stdout) as { token: string };

    const s = await serve(['bots'], { COLLOQUY_DATABASE_URL: db, COLLOQUY_AGENT_REPLIES_FILE: replies });
    started.push(s);
    expect(s.stdout()).toContain(`inbox       ${s.url}/agent`);
    const refused = await fetch(`${s.url}/agent`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('Sign in with your agent token');

    const signedIn = await fetch(`${s.url}/agent/session`, { method: 'POST', body: new URLSearchParams({ token }), redirect: 'manual' });
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(`${s.url}/agent`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<strong id="me">ana</strong>');
    const canned = await fetch(`${s.url}/agent/replies?queue=billing`, { headers: { cookie } });
    expect(await canned.json()).toEqual({ replies: [{ title: 'Hello', text: 'Hi, how can I help?' }] });
    expect(await s.stop('SIGTERM')).toBe(0);
  });

  it('a canned replies file that cannot be used stops the start, naming the variable and the field', async () => {
    const bad = tmp.path('bad-replies.json');
    writeFileSync(bad, JSON.stringify({ queues: { billing: [{ title: 'Refund', text: '' }] } }));
    const r = await run(['serve', 'bots'], { COLLOQUY_DATABASE_URL: ':memory:', COLLOQUY_AGENT_REPLIES_FILE: bad });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('COLLOQUY_AGENT_REPLIES_FILE: the canned replies file');
    expect(r.stderr).toContain('queues.billing[0].text: must not be empty');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
