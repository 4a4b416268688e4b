/**
 * Compiles the docs' complete examples (```ts example blocks) as one TypeScript program, with the
 * repository's strict compiler options, `colloquy` and its subpaths resolving to this repository's
 * sources through the package's own export condition. Each block is a module of its own, placed
 * (in memory) in docs/, so `../bots/pizza.js` is the example bot. Only the blocks are checked;
 * the sources they import are the type check's business.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { isExample, parse, ROOT } from './markdown.js';

/** A complete example, where it is written. */
export interface Example {
  readonly file: string;
  /** The 1-based line of the block's first line of code in `file`. */
  readonly line: number;
  readonly code: string;
}

/** Every block marked as a complete example in the given pages. */
export function examplesIn(files: readonly string[], root: string = ROOT): Example[] {
  return files.flatMap((file) =>
    parse(readFileSync(join(root, file), 'utf8'))
      .blocks.filter(isExample)
      .map((b) => ({ file, line: b.line, code: b.code })),
  );
}

/** The repository's compiler options (tsconfig.json), for checking only. */
function compilerOptions(root: string): ts.CompilerOptions {
  const path = join(root, 'tsconfig.json');
  const read = ts.readConfigFile(path, ts.sys.readFile);
  if (read.error) throw new Error(ts.flattenDiagnosticMessageText(read.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, path);
  return { ...parsed.options, noEmit: true, declaration: false, sourceMap: false, incremental: false };
}

/** Where a block lives in the program: a module of its own in docs/. */
const virtualPath = (root: string, e: Example, i: number): string => join(root, 'docs', `.example-${i}-${e.file.replace(/[^A-Za-z0-9]+/g, '_')}-L${e.line}.ts`);

/** The result of compiling the examples: one line per problem, and the program (to reuse). */
export interface CompileResult {
  readonly problems: string[];
  readonly program: ts.Program;
}

/**
 * Type-checks the examples; each problem reads `file:line: TSxxxx message`, with the line in the
 * Markdown page. Pass the previous result's program to reuse the sources it already parsed.
 */
export function compileExamples(examples: readonly Example[], root: string = ROOT, oldProgram?: ts.Program): CompileResult {
  const options = compilerOptions(root);
  const files = new Map(examples.map((e, i) => [virtualPath(root, e, i), { example: e, text: `${e.code}\nexport {};\n` }]));
  const host = ts.createCompilerHost(options, true);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (f) => files.has(f) || fileExists.call(host, f);
  host.readFile = (f) => files.get(f)?.text ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, onError, create) => {
    const v = files.get(f);
    return v ? ts.createSourceFile(f, v.text, lang, true) : getSourceFile.call(host, f, lang, onError, create);
  };
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host, ...(oldProgram && { oldProgram }) });
  const problems = program.getOptionsDiagnostics().map((d) => `compiler options: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  for (const [path, { example }] of files) {
    const sf = program.getSourceFile(path);
    if (!sf) {
      problems.push(`${example.file}:${example.line}: the example was not compiled`);
      continue;
    }
    for (const d of [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)]) {
      const line = d.start === undefined ? 0 : sf.getLineAndCharacterOfPosition(d.start).line;
      problems.push(`${example.file}:${example.line + line}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    }
  }
  return { problems, program };
}
