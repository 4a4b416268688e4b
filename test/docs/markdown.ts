/**
 * Reading the repository's Markdown as GitHub renders it: which pages are documentation, their
 * headings' anchors (GitHub's slug rules), their links, and their fenced code blocks. Shared by the
 * link check and the examples' compile check.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The repository's root. */
export const ROOT = resolve(import.meta.dirname, '../..');

/** The documentation pages, relative to `root`: the README, every page under docs/, and the READMEs of bench/ and examples/. */
export function docFiles(root: string = ROOT): string[] {
  const files = ['README.md', 'bench/README.md', 'examples/README.md'].filter((f) => existsSync(join(root, f)));
  const walk = (dir: string): void => {
    if (!existsSync(join(root, dir))) return;
    for (const name of readdirSync(join(root, dir)).sort()) {
      const path = `${dir}/${name}`;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk('docs');
  return files;
}

/** A fenced code block: its info string, its text, and the 1-based line of its first line of code. */
export interface CodeBlock {
  readonly info: string;
  readonly code: string;
  readonly line: number;
}

/** A line of prose (outside code blocks), with inline code spans blanked out. */
interface ProseLine {
  readonly text: string;
  readonly line: number;
}

/** Splits a page into prose lines and fenced code blocks. */
export function parse(markdown: string): { prose: ProseLine[]; blocks: CodeBlock[] } {
  const prose: ProseLine[] = [];
  const blocks: CodeBlock[] = [];
  const lines = markdown.split('\n');
  let fence: { marker: string; info: string; start: number; body: string[] } | undefined;
  lines.forEach((text, i) => {
    const open = /^\s*(`{3,}|~{3,})(.*)$/.exec(text);
    if (fence) {
      if (open && open[1]!.startsWith(fence.marker) && open[1]![0] === fence.marker[0] && open[2]!.trim() === '') {
        blocks.push({ info: fence.info, code: fence.body.join('\n'), line: fence.start });
        fence = undefined;
      } else fence.body.push(text);
      return;
    }
    if (open && !(open[1]![0] === '`' && open[2]!.includes('`'))) {
      fence = { marker: open[1]!, info: open[2]!.trim(), start: i + 2, body: [] };
      return;
    }
    prose.push({ text: blankCodeSpans(text), line: i + 1 });
  });
  return { prose, blocks };
}

/** Replaces inline code spans (`x`, ``x``) with spaces, so that nothing inside them reads as a link. */
function blankCodeSpans(text: string): string {
  return text.replace(/(`+)(.+?)\1/g, (m) => ' '.repeat(m.length));
}

/**
 * GitHub's anchor for a heading's text (github-slugger): the rendered text in lower case, with
 * everything but letters, marks, digits, connector punctuation, hyphens and spaces dropped, and
 * each space turned into a hyphen.
 */
export function slug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML tags
    .replace(/[*`]/g, ''); // emphasis and code marks
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' slugs (repeats numbered as GitHub does) and explicit `id`/`name` attributes. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of parse(markdown).prose) {
    const h = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(text);
    if (h) {
      const base = slug(h[1]!);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const a of text.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) out.add(a[1]!);
  }
  return out;
}

/** A link found on a page. */
export interface Link {
  readonly target: string;
  readonly line: number;
}

/** Every link and image of a page's prose: inline `[text](target)` and reference definitions `[x]: target`. */
export function links(markdown: string): Link[] {
  const out: Link[] = [];
  for (const { text, line } of parse(markdown).prose) {
    for (const m of text.matchAll(/\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ target: m[1]!, line });
    const def = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(text);
    if (def) out.push({ target: def[1]!, line });
  }
  return out;
}

/**
 * Follows every relative link and anchor of the given pages; returns one line per broken one,
 * `file:line: target: what is wrong`. Links with a scheme (https:, mailto:) are not followed.
 */
export function brokenLinks(root: string, files: readonly string[]): string[] {
  const problems: string[] = [];
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOf = (abs: string): Set<string> => {
    let a = anchorCache.get(abs);
    if (!a) anchorCache.set(abs, (a = anchors(readFileSync(abs, 'utf8'))));
    return a;
  };
  for (const file of files) {
    const abs = join(root, file);
    for (const { target, line } of links(readFileSync(abs, 'utf8'))) {
      if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const where = `${file}:${line}: ${target}`;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
      const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
      let dest = pathPart === '' ? abs : pathPart.startsWith('/') ? join(root, pathPart) : resolve(dirname(abs), pathPart);
      if (relative(root, dest).startsWith('..')) {
        problems.push(`${where}: leads outside the repository`);
        continue;
      }
      if (!existsSync(dest)) {
        problems.push(`${where}: no such file (${relative(root, dest)})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(dest).isDirectory()) {
        if (!existsSync(join(dest, 'README.md'))) {
          problems.push(`${where}: an anchor into a folder without a README.md`);
          continue;
        }
        dest = join(dest, 'README.md');
      }
      if (!dest.endsWith('.md')) continue; // a line anchor into source (#L10): GitHub's, not ours to check
      if (!anchorsOf(dest).has(anchor)) problems.push(`${where}: no heading or id "${anchor}" in ${relative(root, dest)}`);
    }
  }
  return problems;
}

/** A code block marked as a complete example: ```ts example (or ```typescript example). */
export function isExample(block: CodeBlock): boolean {
  const [lang, ...rest] = block.info.split(/\s+/);
  return (lang === 'ts' || lang === 'typescript') && rest.includes('example');
}
