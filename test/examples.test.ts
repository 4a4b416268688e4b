/**
 * The programs in examples/ run as a reader would run them (the command in examples/README.md,
 * from the repository root, with no provider configured, so each starts its own sandbox) and
 * print what their README section says they print.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** The environment without Colloquy's variables (no real provider) or the outer vitest's. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('COLLOQUY_') && !k.startsWith('VITEST') && k !== 'EXAMPLE_TO' && k !== 'NODE_OPTIONS'));
}

function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(args[0]!, args.slice(1), { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d;
    });
    p.stderr.on('data', (d: Buffer) => {
      err += d;
    });
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

/** `node --conditions=colloquy-source --import tsx examples/<name>.ts`; fails with its output unless it exits 0. */
async function example(name: string): Promise<string> {
  const r = await run([process.execPath, '--conditions=colloquy-source', '--import', 'tsx', `examples/${name}.ts`]);
  if (r.code !== 0) throw new Error(`examples/${name}.ts exited with ${r.code}\n${r.out}\n${r.err}`);
  return r.out;
}

// Concurrent (each test runs its own child process), so each asserts with its own `expect`.
describe.concurrent('examples', () => {
  it('embed-express: the app’s own route answers, the signed webhook is taken, the bot answers with its list', async ({ expect }) => {
    const out = await example('embed-express');
    expect(out).toContain('GET /orders → [{"id":"A-1001","total":42}]');
    expect(out).toMatch(/POST \/webhook → 200 \{"ok":true,"received":1,/);
    expect(out).toContain('bot → 5215512345678: list by interactive, sent\n  Hi! What are you after?\n\n  1. Shoes\n  2. Bags\n');
  });

  it('helpdesk-connector: signed handoff events become a ticket; a forged one is refused; the bot resumes', async ({ expect }) => {
    const out = await example('helpdesk-connector');
    for (const type of ['started', 'message', 'claimed', 'ended']) expect(out).toMatch(new RegExp(`^connector ← handoff\\.${type} evt_[0-9a-f]{4}… \\(signature ok\\)$`, 'm'));
    expect(out).toContain('helpdesk: ticket #1 opened for +5215512345678 in queue billing: "A billing question: I was charged twice."');
    expect(out).toContain('helpdesk: ticket #1 note: customer: Is anyone there?');
    expect(out).toContain('helpdesk: ticket #1 pending: taken by ana');
    expect(out).toContain('helpdesk: ticket #1 solved: by ana (refunded)');
    expect(out).toContain('a forged event → 401');
    // The agent's calls in order; the connector's lines (its own webhooks) may fall between them.
    expect(out).toMatch(/agent API POST …\/claim → 200\n(.*\n)*agent API POST …\/messages → 202\n(.*\n)*agent API POST …\/release → 200/);
    expect(out).toContain('ana → +5215512345678: Hi, Ana here: I have refunded the second charge.\nbot → +5215512345678: You are back with the assistant.');
    expect(out).toContain('tickets: [{"id":1,"status":"solved","notes":1}]');
  });

  it('send-once: a list and an SMS accepted, a refused list as a typed failure', async ({ expect }) => {
    const out = await example('send-once');
    expect(out).toMatch(/^list: accepted \(HTTP 200, attempts=1\) id=wamid\./m);
    expect(out).toMatch(/^sms: accepted \(HTTP 200, attempts=1\) id=\d+ sms=\{"code":0,"mailingId":\d+,"result":"Applied"\}/m);
    expect(out).toMatch(/^list again: not sent \(permanent, HTTP 400, code 131047\): /m);
  });

  it('custom-fallback: SMS only for 131047 in waking hours; otherwise delivery.failed reaches the bot', async ({ expect }) => {
    const out = await example('custom-fallback');
    const [day, night, bug] = out.split(/^(?=\d+ at )/m);
    expect(day).toContain('5215500000001 at 14:00, WhatsApp answers 131047');
    expect(day).toMatch(/out {2}#2 buttons by sms, sent, fallback of #1: "Your appointment is tomorrow/);
    expect(day).toContain('state: asking');
    expect(night).toContain('5215500000002 at 23:00');
    expect(night).not.toContain('by sms');
    expect(night).toContain('in   delivery.failed (code 131047)');
    expect(night).toContain('state: phoneThem');
    expect(bug).toContain('WhatsApp answers 131009');
    expect(bug).not.toContain('by sms');
    expect(bug).toContain('state: phoneThem');
  });

  it('transcript: both directions, delivery results and the fallback, as a table', async ({ expect }) => {
    const lines = (await example('transcript')).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^time\s+dir\s+what\s+channel\s+result$/);
    const body = lines.slice(1, -1).map((l) => l.slice(14).replace(/\s{2,}/g, ' | ')); // without the time column
    expect(body).toEqual([
      'in | text "hi" | whatsapp | done',
      expect.stringMatching(/^out #1 \| list "What can I get you\? .*" \| interactive \| sent, HTTP 200, id wamid\..*, status read$/),
      'in | reply.flat-white "Flat white" | whatsapp | done',
      expect.stringMatching(/^out #2 \| buttons ".*" \| interactive \| failed, HTTP 400, code 131047$/),
      expect.stringMatching(/^out #3 \| buttons ".*" \| sms \| sent, HTTP 200, id \d+, sms code 0 Applied, fallback of #2$/),
      'in | text "2" | sms | done',
      expect.stringMatching(/^out #4 \| text "Coming right up!" \| sms \| sent, HTTP 200, id \d+, sms code 0 Applied$/),
    ]);
    expect(lines.at(-1)).toBe('conversation 1: done, state done, channel sms');
  });
  it('bot-versions: the check names the stranded conversation; migrated, pinned and new ones each run on their version', async ({ expect }) => {
    const lines = (await example('bot-versions')).trimEnd().split('\n');
    expect(lines).toEqual([
      'version 1 served:',
      '  ana: v1 active in size: "Which size?"',
      '  ben: v1 active in milk: "Milk?"',
      "check before serving v2: coffee v1 › milk: 1 stranded (version 2 has no state milk (after its migrations); onIncompatible 'restart')",
      'check before serving v1 + v2: 2 live conversations, none stranded',
      'versions 1 and 2 served:',
      '  ana: v2 done in done: "Your large flat white is on its way (migrated from v1)"',
      '  ben: v1 done in done: "Your large flat white with oat milk is on its way"',
      '  cleo: v2 active in menu: "A flat white?"',
    ]);
  });

  // examples/harness-test.test.ts is collected by vitest.config.ts and runs with npm test itself.
});
