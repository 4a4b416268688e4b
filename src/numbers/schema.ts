/**
 * The zod schema of one entry of the numbers file. Field-level checks only (each field reports its
 * own problem, so a file's every problem is listed at once); what spans fields or entries (token and
 * tokenEnv both given, duplicates) is checked in parse.ts. No message quotes a value: a value may be
 * a secret.
 */
import { z } from 'zod';

/** The largest send rate a number can have (messages per second; Meta's upgraded tier). */
export const MAX_NUMBER_SEND_RATE = 1000;

/** The longest per-user pace accepted (one hour, in ms): anything longer is a mistake in units. */
export const MAX_USER_PACE_MS = 3_600_000;

/** The fields an entry may have, in the order the messages list them. */
export const NUMBER_FIELDS = [
  'phoneNumberId',
  'displayNumber',
  'bot',
  'provider',
  'token',
  'tokenEnv',
  'appSecret',
  'appSecretEnv',
  'sendRate',
  'userPaceMs',
  'flowPrivateKey',
  'flowPassphraseEnv',
] as const;

/** A message for a missing field or one of the wrong type; the rule otherwise. */
const says = (rule: string) => ({ error: (iss: { input?: unknown }) => (iss.input === undefined ? `is required: ${rule}` : rule) });

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `tokenEnv` / `appSecretEnv`: the name of a variable that is set (and not empty) in `env`. */
function envName(env: Readonly<Record<string, string | undefined>>) {
  return z.string(says('must be the name of an environment variable')).superRefine((name, ctx) => {
    if (!ENV_NAME.test(name)) ctx.addIssue({ code: 'custom', message: 'must be the name of an environment variable (letters, digits and "_", not starting with a digit)' });
    else if (env[name] === undefined) ctx.addIssue({ code: 'custom', message: `names the environment variable ${name}, which is not set` });
    else if (env[name] === '') ctx.addIssue({ code: 'custom', message: `names the environment variable ${name}, which is empty` });
  });
}

/** An inline secret: a non-empty string (never quoted back). */
const secret = (what: string) => z.string(says(`must be the ${what} as a string`)).min(1, `must not be empty (the ${what})`);

const wholeNumber = (min: number, max: number, unit: string) =>
  z
    .number(says(`must be a whole number from ${min} to ${max}${unit}`))
    .int(`must be a whole number from ${min} to ${max}${unit}`)
    .min(min, `must be a whole number from ${min} to ${max}${unit}`)
    .max(max, `must be a whole number from ${min} to ${max}${unit}`);

function displayNumberProblem(n: string): string | undefined {
  if (!/^\+?[0-9][0-9 ().-]*$/.test(n)) return 'must be a phone number with its country code: digits, optionally "+", spaces, "-", "." or parentheses';
  const digits = n.replace(/[^0-9]/g, '').length;
  return digits < 6 || digits > 20 ? `must have 6 to 20 digits (country code and number), got ${digits}` : undefined;
}

/** One entry of `numbers`, given the environment its `…Env` fields name. */
export function numberEntrySchema(env: Readonly<Record<string, string | undefined>>) {
  return z.strictObject({
    phoneNumberId: z.string(says("must be the Cloud API's phone_number_id, digits in a string")).regex(/^[0-9]{1,32}$/, "must be the Cloud API's phone_number_id: 1 to 32 digits"),
    displayNumber: z.string(says('must be the phone number users write to, with its country code')).superRefine((n, ctx) => {
      const problem = displayNumberProblem(n);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
    }),
    bot: z.string(says('must be the id of a bot this deployment serves')).regex(/^[a-z0-9][a-z0-9_-]{0,63}$/i, 'must be a bot id: 1–64 letters, digits, "-" or "_"'),
    provider: z.enum(['cloud-api', 'seed'], says('must be "cloud-api" or "seed"')).default('cloud-api'),
    token: secret('access token').optional(),
    tokenEnv: envName(env).optional(),
    appSecret: secret('app secret').optional(),
    appSecretEnv: envName(env).optional(),
    sendRate: wholeNumber(1, MAX_NUMBER_SEND_RATE, ' (messages per second)').optional(),
    userPaceMs: wholeNumber(0, MAX_USER_PACE_MS, ' (milliseconds)').optional(),
    flowPrivateKey: z.string(says('must be the path of the PEM file of this number’s Flow endpoint key')).min(1, 'must not be empty (a PEM file’s path)').optional(),
    flowPassphraseEnv: envName(env).optional(),
  });
}

/** An entry that passed {@link numberEntrySchema}. */
export type NumberEntry = z.infer<ReturnType<typeof numberEntrySchema>>;
