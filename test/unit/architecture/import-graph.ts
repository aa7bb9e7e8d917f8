/**
 * Reads the import graph of src/ with the TypeScript compiler API and checks it: no cycle between
 * files, no cycle between folders, and every arrow between units (top-level folders, and the few
 * sub-folders the table names) listed as allowed.
 * Type-only imports count too: a type circle still couples two files.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** File (path relative to the source root, `/`-separated) -> files it imports. */
export type ImportGraph = ReadonlyMap<string, ReadonlySet<string>>;

function listTs(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTs(path));
    else if (entry.name.endsWith('.ts')) out.push(path);
  }
  return out;
}

function toPosix(path: string): string {
  return path.split('\\').join('/');
}

/** Every module specifier a file names: static imports, re-exports and `import()` with a literal. */
export function specifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) found.push(literal.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The graph of relative imports between the .ts files under `root`. */
export function readGraph(root: string): ImportGraph {
  const graph = new Map<string, Set<string>>();
  for (const file of listTs(root)) {
    const from = toPosix(relative(root, file));
    const targets = new Set<string>();
    for (const spec of specifiers(file, readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = toPosix(relative(root, resolve(dirname(file), spec)));
      // package.json and the like lie outside the tree and are no part of its graph.
      if (!target.startsWith('../')) targets.add(target);
    }
    graph.set(from, targets);
  }
  return graph;
}

/** Strongly connected components with more than one member, or a member importing itself. */
export function cycles(graph: ImportGraph): string[][] {
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (node: string): void => {
    indexOf.set(node, index);
    low.set(node, index);
    index++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
      }
    }
    if (low.get(node) !== indexOf.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!indexOf.has(node)) connect(node);
  return found;
}

/** The folder a file lives in (`a/b/c.ts` -> `a/b`; a file at the root -> `.`). */
export function folderOf(file: string): string {
  const cut = file.lastIndexOf('/');
  return cut < 0 ? '.' : file.slice(0, cut);
}

/** The top-level folder of a file (`a/b/c.ts` -> `a`; a file at the root -> `.`). */
export function topOf(file: string): string {
  const cut = file.indexOf('/');
  return cut < 0 ? '.' : file.slice(0, cut);
}

/**
 * The unit of the allowed-arrows table a file belongs to: the longest key that is a folder holding it
 * (so `events/persist` can be a unit of its own inside `events`), else its top-level folder.
 */
export function unitOf(file: string, allowed: AllowedArrows): string {
  let best: string | undefined;
  for (const key of Object.keys(allowed)) {
    if (key !== '.' && file.startsWith(`${key}/`) && (!best || key.length > best.length)) best = key;
  }
  return best ?? topOf(file);
}

/**
 * Collapses files into groups (by `groupOf`) and keeps the arrows between different groups.
 * Nested folders are groups of their own, so `monitors/probe` -> `monitors` is an arrow like any other.
 */
export function collapse(graph: ImportGraph, groupOf: (file: string) => string): ImportGraph {
  const out = new Map<string, Set<string>>();
  for (const [from, targets] of graph) {
    const group = groupOf(from);
    const arrows = out.get(group) ?? new Set<string>();
    out.set(group, arrows);
    for (const to of targets) if (groupOf(to) !== group) arrows.add(groupOf(to));
  }
  return out;
}

/** Unit (a folder, `.` for the files at the root) -> the units its files may import; itself always. */
export type AllowedArrows = Readonly<Record<string, readonly string[]>>;

/** Every import that crosses units without being listed, as `from -> to (file -> file)`. */
export function forbiddenArrows(graph: ImportGraph, allowed: AllowedArrows): string[] {
  const bad: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      const [a, b] = [unitOf(from, allowed), unitOf(to, allowed)];
      if (a === b) continue;
      const list = allowed[a];
      if (list?.includes(b)) continue;
      bad.push(`${a} -> ${b} (${from} -> ${to})${list ? '' : ` [${a} has no entry in the table]`}`);
    }
  }
  return bad.sort();
}
