/**
 * The `flows` part's own pieces: its node:crypto rendering of the Flow protocol agrees with
 * Colloquy's (so "every answer decrypts" means what it says), its baseline endpoint answers as a
 * Flow endpoint must over real HTTP, and the load generator's checks catch a wrong answer and a
 * replay that differs. The part itself runs in test/bench/quick.test.ts.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFlowBaseline, type RunningFlowBaseline } from '../../bench/flow-baseline.js';
import { openAnswer, sealRequest, signFlow } from '../../bench/flow-crypto.js';
import { colloquyProblem, walkAction, type FlowUser, type WalkTarget } from '../../bench/flow-walk.js';
import { SECRET } from '../../bench/ipc.js';
import { decryptFlowRequest, encryptFlowResponse } from '../../src/flows/crypto.js';
import { signFlowBody } from '../../src/flows/signature.js';

const passphrase = 'bench-test-passphrase';
const pair = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase },
});
const publicKey = createPublicKey(pair.publicKey);

let dir: string;
let baseline: RunningFlowBaseline;
let agent: Agent;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'colloquy-flow-bench-test-'));
  const path = join(dir, 'private.pem');
  writeFileSync(path, pair.privateKey, { mode: 0o600 });
  baseline = await startFlowBaseline({ secret: SECRET, privateKeyPath: path, passphrase });
  agent = new Agent({ connections: 4 });
});
afterAll(async () => {
  await agent?.close();
  await baseline?.close();
  rmSync(dir, { recursive: true, force: true });
});

const users = (n: number): FlowUser[] => Array.from({ length: n }, (_, i) => ({ user: `1555010${i}`, token: `ft_${i}`, answers: {} }));
const target = (checkContent: boolean): WalkTarget => ({ agent, origin: baseline.url, publicKey, checkContent });

describe("the flows part's protocol", () => {
  it("seals requests Colloquy's endpoint decrypts, and opens answers Colloquy seals", async () => {
    const sealed = sealRequest({ action: 'INIT', flow_token: 'ft_1' }, publicKey, SECRET);
    expect(sealed.signature).toBe(signFlowBody(sealed.body, SECRET));
    expect(signFlow(sealed.body, 'other')).not.toBe(sealed.signature);
    const opened = decryptFlowRequest(JSON.parse(sealed.body), createPrivateKey({ key: pair.privateKey, format: 'pem', passphrase }));
    expect(opened.payload).toEqual({ action: 'INIT', flow_token: 'ft_1' });
    expect(openAnswer(encryptFlowResponse({ screen: 'DAYS' }, opened.aesKey, opened.iv), sealed)).toEqual({ screen: 'DAYS' });
    // A fresh AES key and IV every time, as WhatsApp retries.
    expect(sealRequest({}, publicKey, SECRET).aesKey.equals(sealed.aesKey)).toBe(false);
    expect(() => openAnswer(encryptFlowResponse({}, opened.aesKey, Buffer.alloc(16)), sealed)).toThrow();
  });
});

describe("the flows part's baseline and load generator", () => {
  it('walks every action through the baseline: every answer a 200 that opens, the replay identical', async () => {
    const flows = users(6);
    for (const action of ['init', 'read', 'submit', 'replay'] as const) {
      const r = await walkAction(target(false), flows, action, 3);
      expect(r.failures).toEqual([]);
      expect(r.ms).toHaveLength(6);
    }
    expect(flows[0]!.answers.replay).toEqual(flows[0]!.answers.submit);
    expect(baseline.stats()).toMatchObject({ answered: 24, refused: 0 });
  });

  it('refuses a wrong signature with 432, as the part would report it', async () => {
    const sealed = sealRequest({ action: 'ping' }, publicKey, 'not-the-secret');
    const res = await agent.request({ origin: baseline.url, path: '/flows', method: 'POST', body: sealed.body, headers: { 'x-hub-signature-256': sealed.signature } });
    await res.body.text();
    expect(res.statusCode).toBe(432);
  });

  it("fails an answer that is not the bot's, and a replay that answers differently", async () => {
    const flows = users(2);
    // The baseline's constant answer is the opening screen, never the next one.
    expect((await walkAction(target(true), flows, 'init', 2)).failed).toBe(0);
    const read = await walkAction(target(true), flows, 'read', 2);
    expect(read.failed).toBe(2);
    expect(read.failures[0]).toContain('the DAYS submit did not answer the SLOTS screen');
    // The first user's submit is real; the second's recorded answer is not what the endpoint answers.
    expect((await walkAction(target(false), flows.slice(0, 1), 'submit', 1)).failed).toBe(0);
    flows[1]!.answers.submit = { screen: 'SUCCESS', data: {} };
    const replay = await walkAction(target(false), flows, 'replay', 2);
    expect(replay.failed).toBe(1);
    expect(replay.failures[0]).toContain('the replay answered differently from the submit');
  });

  it("accepts exactly the bench bot's answers", () => {
    const u: FlowUser = { user: '15550100', token: 'ft_x', answers: {} };
    expect(colloquyProblem('read', u, { screen: 'SLOTS', data: { day: 'tue', slots: [] } })).toBeUndefined();
    expect(colloquyProblem('read', u, { screen: 'SLOTS', data: { day: 'mon' } })).toBeDefined();
    const done = { screen: 'SUCCESS', data: { extension_message_response: { params: { flow_token: 'ft_x', booking: 'R15550100' } } } };
    expect(colloquyProblem('submit', u, done)).toBeUndefined();
    expect(colloquyProblem('submit', { ...u, user: '15550101' }, done)).toBeDefined();
  });
});
