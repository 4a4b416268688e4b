/** The handoff variables of the environment: validated at start, naming the variable. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('handoff configuration', () => {
  it("reads the agents' token and the connector", () => {
    const c = loadConfig({ COLLOQUY_AGENT_TOKEN: 'a'.repeat(20), COLLOQUY_HANDOFF_WEBHOOK_URL: 'https://desk.example.com/hook/', COLLOQUY_HANDOFF_WEBHOOK_SECRET: 's'.repeat(16) });
    expect(c.agentToken).toBe('a'.repeat(20));
    expect(c.handoffWebhook).toEqual({ url: 'https://desk.example.com/hook', secret: 's'.repeat(16) });
    expect(loadConfig({})).not.toHaveProperty('agentToken');
    expect(loadConfig({})).not.toHaveProperty('handoffWebhook');
  });

  it('reads how long a claim lasts idle: 30 minutes by default, 0 for never', () => {
    expect(loadConfig({}).handoffClaimIdleMs).toBe(1_800_000);
    expect(loadConfig({ COLLOQUY_HANDOFF_CLAIM_IDLE_MS: '60000' }).handoffClaimIdleMs).toBe(60_000);
    expect(loadConfig({ COLLOQUY_HANDOFF_CLAIM_IDLE_MS: '0' }).handoffClaimIdleMs).toBe(0);
  });

  it('reads how long an inbox sign-in lasts (12 hours unless set)', () => {
    expect(loadConfig({}).agentSessionHours).toBe(12);
    expect(loadConfig({ COLLOQUY_AGENT_SESSION_HOURS: '24' }).agentSessionHours).toBe(24);
  });

  it.each([
    [{ COLLOQUY_AGENT_SESSION_HOURS: '0' }, /COLLOQUY_AGENT_SESSION_HOURS: must be a whole number from 1 to 720, got "0"/],
    [{ COLLOQUY_AGENT_SESSION_HOURS: '12h' }, /COLLOQUY_AGENT_SESSION_HOURS: must be a whole number from 1 to 720, got "12h"/],
    [{ COLLOQUY_AGENT_TOKEN: 'short' }, /COLLOQUY_AGENT_TOKEN: must be at least 16 characters/],
    [{ COLLOQUY_HANDOFF_CLAIM_IDLE_MS: 'soon' }, /COLLOQUY_HANDOFF_CLAIM_IDLE_MS: must be a whole number from 0 to 2592000000/],
    [{ COLLOQUY_HANDOFF_CLAIM_IDLE_MS: '-5' }, /COLLOQUY_HANDOFF_CLAIM_IDLE_MS: must be a whole number/],
    [{ COLLOQUY_HANDOFF_WEBHOOK_URL: 'ftp://desk', COLLOQUY_HANDOFF_WEBHOOK_SECRET: 's'.repeat(16) }, /COLLOQUY_HANDOFF_WEBHOOK_URL: must be an http or https URL/],
    [{ COLLOQUY_HANDOFF_WEBHOOK_URL: 'not a url' }, /COLLOQUY_HANDOFF_WEBHOOK_URL: must be an absolute http\(s\) URL/],
    [{ COLLOQUY_HANDOFF_WEBHOOK_URL: 'https://desk.example.com' }, /COLLOQUY_HANDOFF_WEBHOOK_SECRET: is required when COLLOQUY_HANDOFF_WEBHOOK_URL is set/],
    [{ COLLOQUY_HANDOFF_WEBHOOK_SECRET: 's'.repeat(16) }, /COLLOQUY_HANDOFF_WEBHOOK_SECRET: is set but COLLOQUY_HANDOFF_WEBHOOK_URL is not/],
    [{ COLLOQUY_HANDOFF_WEBHOOK_URL: 'https://desk.example.com', COLLOQUY_HANDOFF_WEBHOOK_SECRET: 'short' }, /COLLOQUY_HANDOFF_WEBHOOK_SECRET: must be at least 16 characters/],
  ])('refuses %j', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('never puts a secret in the message', () => {
    try {
      loadConfig({ COLLOQUY_AGENT_TOKEN: 'secret1' });
    } catch (err) {
      expect(String(err)).not.toContain('secret1');
    }
  });
});
