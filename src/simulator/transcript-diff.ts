/** A line diff (longest common subsequence), printed like `diff -u` without the headers. */

/** One line of a diff: kept (` `), only expected (`-`), or only actual (`+`). */
export interface DiffLine {
  readonly op: ' ' | '-' | '+';
  readonly text: string;
}

/** The lines of `expected` and `actual` aligned on their longest common subsequence. */
export function diffLines(expected: readonly string[], actual: readonly string[]): DiffLine[] {
  const n = expected.length;
  const m = actual.length;
  // lcs[i][j]: length of the LCS of expected[i..] and actual[j..]. Transcripts are short.
  const lcs = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = expected[i] === actual[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && expected[i] === actual[j]) {
      out.push({ op: ' ', text: expected[i++]! });
      j++;
    } else if (j < m && (i >= n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) out.push({ op: '+', text: actual[j++]! });
    else out.push({ op: '-', text: expected[i++]! });
  }
  return reorderRemovalsFirst(out);
}

/** Puts each run of changes as its removals, then its additions (easier to read). */
function reorderRemovalsFirst(lines: DiffLine[]): DiffLine[] {
  const out: DiffLine[] = [];
  let run: DiffLine[] = [];
  const flush = (): void => {
    out.push(...run.filter((l) => l.op === '-'), ...run.filter((l) => l.op === '+'));
    run = [];
  };
  for (const l of lines) {
    if (l.op === ' ') {
      flush();
      out.push(l);
    } else run.push(l);
  }
  flush();
  return out;
}

/** The diff as text, `-` for expected and `+` for actual, with `context` unchanged lines around each change. */
export function formatDiff(lines: readonly DiffLine[], context = 3): string {
  const near = lines.map(() => false);
  lines.forEach((l, i) => {
    if (l.op === ' ') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) near[k] = true;
  });
  // A fold must hide at least two lines; one line is shown instead of "… (1 unchanged line)".
  near.forEach((n, i) => {
    if (!n && near[i - 1] !== false && near[i + 1] !== false) near[i] = true;
  });
  const out: string[] = [];
  let skipped = 0;
  lines.forEach((l, i) => {
    if (!near[i]) {
      skipped++;
      return;
    }
    if (skipped) out.push(`  … (${skipped} unchanged lines)`);
    skipped = 0;
    out.push(`${l.op} ${l.text}`);
  });
  if (skipped) out.push(`  … (${skipped} unchanged lines)`);
  return out.join('\n');
}

/** True when the diff has a change. */
export function hasChanges(lines: readonly DiffLine[]): boolean {
  return lines.some((l) => l.op !== ' ');
}
