/**
 * docs/library-api.md is the complete "what to import from where": every entry of the package's
 * exports map has a row, and every value an entry for bot authors, servers, stores or tests
 * exports is named on the page. A new or renamed export fails here until the page says where it is.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './markdown.js';

const page = readFileSync(join(ROOT, 'docs/library-api.md'), 'utf8');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; exports: Record<string, unknown> };

/** The names written as code on the page. */
const named = new Set([...page.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1]!.split(/[^A-Za-z0-9_$/.-]+/)));

describe('docs/library-api.md', () => {
  it("has a row for every entry of the package's exports", () => {
    const entries = Object.keys(manifest.exports)
      .filter((k) => k !== './package.json')
      .map((k) => (k === '.' ? manifest.name : `${manifest.name}/${k.slice(2)}`));
    const rows = new Set([...page.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1]!));
    expect(entries.filter((e) => !rows.has(e))).toEqual([]);
  });

  it.each(['colloquy', 'colloquy/server', 'colloquy/sqlite', 'colloquy/postgres', 'colloquy/store', 'colloquy/testing'])('names every value %s exports', async (entry) => {
    const values = Object.keys(await import(/* @vite-ignore */ entry));
    expect(values.length).toBeGreaterThan(0);
    expect(values.filter((v) => !named.has(v))).toEqual([]);
  });
});
