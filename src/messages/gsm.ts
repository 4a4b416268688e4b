/**
 * SMS encoding and segment counting (provider.md §3, SMS text). A text that uses only the GSM
 * 03.38 default alphabet and its extension table goes as GSM-7 (160 septets in one part, 153 per
 * part when split); anything else forces UCS-2 (70 UTF-16 code units, 67 per part).
 */

/**
 * The GSM 03.38 default alphabet (3GPP TS 23.038 §6.2.1), in table order, without 0x1B (the
 * escape to the extension table, not a character). 0x09 is the capital `Ç`, as in Unicode's
 * GSM0338 mapping: a lower-case `ç` is not in the table.
 */
export const GSM7_BASIC = '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' + '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';

/** The extension table (3GPP TS 23.038 §6.2.1.1): each costs two septets (escape + code). */
export const GSM7_EXTENSION = '\f^{}\\[~]|€';

const BASIC = new Set(GSM7_BASIC);
const EXTENSION = new Set(GSM7_EXTENSION);

/** How an SMS is encoded on the air. */
export type SmsEncoding = 'gsm7' | 'ucs2';

/** Part sizes per encoding: `single` when the text fits one part, `multi` per part when split
 *  (the concatenation header takes 7 septets or 3 UCS-2 units of each part). */
export const SMS_PART_SIZES = {
  gsm7: { single: 160, multi: 153 },
  ucs2: { single: 70, multi: 67 },
} as const satisfies Record<SmsEncoding, { single: number; multi: number }>;

/** What an SMS text costs. */
export interface SmsAnalysis {
  readonly encoding: SmsEncoding;
  /** Septets for GSM-7 (extension characters count two), UTF-16 code units for UCS-2. */
  readonly units: number;
  /** Parts the text is sent in (an empty text still takes one). */
  readonly segments: number;
  /** Capacity of each part at this length: 160/153 for GSM-7, 70/67 for UCS-2. */
  readonly perSegment: number;
}

/** True when a single character (code point) is in the GSM-7 basic or extension table. */
export function isGsm7Char(ch: string): boolean {
  return BASIC.has(ch) || EXTENSION.has(ch);
}

/** True when the whole text can go as GSM-7. */
export function isGsm7(text: string): boolean {
  for (const ch of text) if (!isGsm7Char(ch)) return false;
  return true;
}

/** The encoding a text needs. */
export function smsEncoding(text: string): SmsEncoding {
  return isGsm7(text) ? 'gsm7' : 'ucs2';
}

function unitsOf(ch: string, encoding: SmsEncoding): number {
  if (encoding === 'ucs2') return ch.length;
  return EXTENSION.has(ch) ? 2 : 1;
}

/** Units of a text in an encoding (GSM-7 septets or UCS-2 code units). */
export function smsUnits(text: string, encoding: SmsEncoding = smsEncoding(text)): number {
  let n = 0;
  for (const ch of text) n += unitsOf(ch, encoding);
  return n;
}

/**
 * Splits a text into the parts it is sent in. A character is never split across parts: neither
 * an extension character's escape pair nor a UTF-16 surrogate pair, so a part may hold one unit
 * less than its capacity.
 */
export function splitSms(text: string): string[] {
  const encoding = smsEncoding(text);
  const sizes = SMS_PART_SIZES[encoding];
  if (smsUnits(text, encoding) <= sizes.single) return [text];
  const parts: string[] = [];
  let part = '';
  let used = 0;
  for (const ch of text) {
    const cost = unitsOf(ch, encoding);
    if (used + cost > sizes.multi) {
      parts.push(part);
      part = '';
      used = 0;
    }
    part += ch;
    used += cost;
  }
  parts.push(part);
  return parts;
}

/** Encoding, units and parts of an SMS text. */
export function analyzeSms(text: string): SmsAnalysis {
  const encoding = smsEncoding(text);
  const sizes = SMS_PART_SIZES[encoding];
  const units = smsUnits(text, encoding);
  const segments = units <= sizes.single ? 1 : splitSms(text).length;
  return { encoding, units, segments, perSegment: segments === 1 ? sizes.single : sizes.multi };
}
