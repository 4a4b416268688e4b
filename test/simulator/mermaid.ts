/**
 * The real Mermaid parser for diagram tests. Mermaid sanitizes labels with DOMPurify, which needs a
 * DOM: linkedom provides one (jsdom no longer installs on Node 20). `statesOf()` returns what
 * Mermaid's state renderer draws for each state: its title (`label`) and the lines beneath it.
 */
import { parseHTML } from 'linkedom';

/** A state box as Mermaid's renderer gets it. */
export interface MermaidState {
  readonly id: string;
  /** The title drawn in the box. */
  readonly label: string;
  /** Lines drawn beneath the title (empty when the box shows the title alone). */
  readonly description: readonly string[];
  /** `rect`, `rectWithTitle`, `roundedWithTitle` (a composite), `note`, `stateStart`, … */
  readonly shape: string;
}

interface Db {
  getData(): { nodes: { id: string; label?: string; description?: string[] | string; shape: string }[]; edges: { start: string; end: string; label?: string }[] };
}

type MermaidApi = typeof import('mermaid')['default'];
let loaded: Promise<MermaidApi> | undefined;

function load(): Promise<MermaidApi> {
  loaded ??= (async () => {
    const g = globalThis as Record<string, unknown>;
    if (g['window'] === undefined) {
      const { window, document } = parseHTML('<!doctype html><html><body></body></html>');
      g['window'] = window;
      g['document'] = document;
    }
    return (await import('mermaid')).default;
  })();
  return loaded;
}

/** Parses a diagram with Mermaid (throws Mermaid's own error when it does not parse). */
export async function parseMermaid(src: string): Promise<{ states: MermaidState[]; edges: { from: string; to: string; label: string }[] }> {
  const mermaid = await load();
  await mermaid.parse(src);
  const diagram = await mermaid.mermaidAPI.getDiagramFromText(src);
  const data = (diagram.db as unknown as Db).getData();
  const states = data.nodes.map((n) => ({
    id: n.id,
    label: n.label ?? n.id,
    description: Array.isArray(n.description) ? n.description : [],
    shape: n.shape,
  }));
  return { states, edges: data.edges.map((e) => ({ from: e.start, to: e.end, label: e.label ?? '' })) };
}
