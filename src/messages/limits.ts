/**
 * The provider's limits (provider.md §3, from Meta's documentation). Counted in characters
 * (Unicode code points), as WhatsApp counts them.
 */
export const LIMITS = {
  list: {
    sections: { min: 1, max: 10 },
    rowsTotal: { min: 1, max: 10 },
    headerText: 60,
    body: 4096,
    footer: 60,
    buttonText: 20,
    sectionTitle: 24,
    rowId: 200,
    rowTitle: 24,
    rowDescription: 72,
  },
  buttons: {
    count: { min: 1, max: 3 },
    id: 256,
    title: 20,
    body: 1024,
    footer: 60,
    fileName: 240,
  },
  flow: {
    body: 1024,
    cta: 20,
  },
  text: { body: 4096 },
  sms: { message: 1600 },
} as const;

/** File extensions accepted for each media header (checked when the link or name has one). */
export const MEDIA_EXTENSIONS = {
  image: ['jpg', 'jpeg', 'png'],
  video: ['mp4', '3gp', '3gpp'],
  document: ['pdf', 'doc', 'docx', 'xls', 'xlsx', 'ppt', 'pptx', 'txt'],
} as const;

/** Length in characters (code points), not UTF-16 units. */
export function charLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
