import { parseFlags } from '../config/flag-parser.ts';
import type { CommandIo } from '../core/types.ts';
import { SealError, sealUploadURL } from './sealed-url.ts';

const USAGE =
  "usage: node-problem-detector seal --node NODE --key KEY < url\n  KEY: the Node's node-problem-detector.io/diagnostics-key annotation; the URL is read from stdin (not argv: argv is visible in ps and shell history)";

/**
 * `seal`: print the stdin URL sealed for one node's agent, the value of a NodeDiagnostic's
 * spec.sealedUploadURL. Needs no cluster access: the key is public.
 */
export function runSeal(argv: readonly string[], io: CommandIo): number {
  const flags = parseFlags(argv, [
    { name: 'node', kind: 'string', help: 'the node the request is for' },
    { name: 'key', kind: 'string', help: "the node's diagnostics-key annotation" },
  ]);
  const node = String(flags.values.get('node') ?? '');
  const key = String(flags.values.get('key') ?? '');
  const errors = [...flags.errors];
  if (node === '') errors.push('--node is required');
  if (key === '') errors.push('--key is required');
  if (flags.positional.length > 0) errors.push('the URL is read from stdin, not from an argument');
  const url = errors.length === 0 ? stdinURL(io.readStdin(), errors) : '';
  if (errors.length > 0) {
    io.stderr(`${errors.join('\n')}\n${USAGE}\n`);
    return 2;
  }
  try {
    io.stdout(`${sealUploadURL(url, key, node)}\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    io.stderr(`--key: ${err.message}\n`);
    return 2;
  }
}

/**
 * The one URL on stdin. Two lines would be sealed as one URL with a newline inside, which no upload
 * works with: more than one line is refused, as is anything but an http(s) URL without blanks.
 */
function stdinURL(stdin: string, errors: string[]): string {
  const lines = stdin.split(/\r?\n/).filter((l) => l.trim() !== '');
  const url = lines[0]?.trim() ?? '';
  if (lines.length > 1) errors.push(`stdin must hold one URL on one line; it holds ${lines.length} lines`);
  else if (!/^https?:\/\/\S+$/.test(url)) errors.push('stdin must hold one http or https URL');
  return url;
}
