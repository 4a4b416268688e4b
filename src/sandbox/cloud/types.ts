/** The Cloud API mode's settings and what it exposes: numbers, templates, the 24-hour window. */

/** One business number of the sandbox's Cloud API mode. */
export interface SandboxNumber {
  /** The `phone_number_id` in the URL and in webhook metadata. */
  readonly phoneNumberId: string;
  /** The number users see and write to (`metadata.display_phone_number`), digits only. */
  readonly displayNumber: string;
  /** This number's own access token; the mode's `token` when absent. */
  readonly token?: string | undefined;
}

/** A template header as approved: text (with at most one `{{1}}`) or a media kind. */
export type SandboxTemplateHeader = { readonly type: 'text'; readonly text: string } | { readonly type: 'image' | 'video' | 'document' };

/**
 * A template the sandbox "knows" (as if approved in the WhatsApp Manager). Its body's `{{1}}`,
 * `{{2}}`… placeholders set how many body parameters a message must give.
 */
export interface SandboxTemplate {
  readonly name: string;
  /** The language code it was approved in (`en`, `en_US`). */
  readonly language: string;
  /** The body text, with `{{n}}` placeholders. */
  readonly body: string;
  readonly header?: SandboxTemplateHeader | undefined;
  readonly footer?: string | undefined;
  /** The quick-reply buttons' texts, in order: button `index` n is the n-th. */
  readonly quickReplies?: readonly string[] | undefined;
}

/** How a free-form message outside the window is refused. */
export type WindowErrors = 'sync' | 'status';

/** `createSandbox({ cloudApi })`: the Cloud API mode's settings. Everything is optional. */
export interface CloudApiOptions {
  /** The access token accepted as `Authorization: Bearer …` (default `SANDBOX_CLOUD_API_TOKEN`). */
  readonly token?: string | undefined;
  /** The business numbers (default one: the sandbox's `phoneNumberId` and `sender`). */
  readonly numbers?: readonly SandboxNumber[] | undefined;
  /** The templates it knows (default `SANDBOX_TEMPLATES`). */
  readonly templates?: readonly SandboxTemplate[] | undefined;
  /** The customer service window in milliseconds (default 24 hours). */
  readonly windowMs?: number | undefined;
  /**
   * `sync` (default): a free-form message outside the window is answered 400 with 131047.
   * `status`: it is accepted (200, a wamid) and a `failed` status with 131047 goes to the webhook.
   */
  readonly windowErrors?: WindowErrors | undefined;
  /** Post `sent` then `delivered` statuses to the webhook for each accepted message (default true). */
  readonly statuses?: boolean | undefined;
}

/** The Cloud API mode as configured (`sandbox.cloudApi`). */
export interface CloudApiSettings {
  readonly token: string;
  readonly numbers: readonly SandboxNumber[];
  readonly templates: readonly SandboxTemplate[];
  readonly windowMs: number;
  readonly windowErrors: WindowErrors;
  readonly statuses: boolean;
}

/** The 24-hour window between one user and one business number. */
export interface WindowState {
  /** Whether a free-form message may be sent now. */
  readonly open: boolean;
  /** When the user last wrote to the number (sandbox clock, ms), if ever. */
  readonly lastUserMessageAt?: number;
  /** When the window closes (or closed). */
  readonly closesAt?: number;
}
