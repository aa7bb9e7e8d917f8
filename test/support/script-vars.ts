/**
 * Runs one of the cached tool builds (test/tools/*.sh) and reads the KEY=value lines it prints on
 * stdout; progress goes to its stderr, of which a failure reports the tail.
 */
import { execFile } from 'node:child_process';

/** The KEY=value lines of a build script's stdout. */
export function parseVars(stdout: string): Map<string, string> {
  const vars = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const m = /^([A-Z_0-9]+)=(.*)$/.exec(line.trim());
    if (m?.[1] && m[2]) vars.set(m[1], m[2]);
  }
  return vars;
}

export function scriptVars(script: string, timeoutMs = 60 * 60_000): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [script],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) {
          const tail = stderr.split('\n').slice(-30).join('\n');
          reject(new Error(`${script} failed: ${err.message}\n${tail}`));
          return;
        }
        resolve(parseVars(stdout));
      },
    );
  });
}

/** The value of `key`, or an error naming the script that did not print it. */
export function needVar(vars: Map<string, string>, key: string, script: string): string {
  const v = vars.get(key);
  if (!v) throw new Error(`${script} printed no ${key}=…`);
  return v;
}
