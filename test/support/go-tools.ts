/**
 * The real operator tools (helm, promtool, the prometheus-operator CRDs) for the Helm, alert and
 * deploy tests. test/tools/go-tools.sh does the (slow, cached) Go builds; this module only runs it
 * and reads the KEY=value lines it prints.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';

export const GO_TOOLS_SCRIPT = join(import.meta.dirname, '..', 'tools', 'go-tools.sh');

export interface GoTools {
  readonly helm: string;
  readonly promtool: string;
  /** Folder of monitoring.coreos.com_*.yaml from the prometheus-operator module's example/. */
  readonly crdDir: string;
}

let cached: Promise<GoTools> | undefined;

/** Runs go-tools.sh once per process (a no-op after the first build) and returns what it built. */
export function ensureGoTools(): Promise<GoTools> {
  cached ??= new Promise<GoTools>((resolve, reject) => {
    execFile(
      'bash',
      [GO_TOOLS_SCRIPT],
      { timeout: 60 * 60_000, maxBuffer: 16 * 1024 * 1024, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err) {
          reject(
            new Error(
              `${GO_TOOLS_SCRIPT} failed: ${err.message}\n${stderr.split('\n').slice(-30).join('\n')}`,
            ),
          );
          return;
        }
        const vars = new Map<string, string>();
        for (const line of stdout.split('\n')) {
          const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
          if (m?.[1] && m[2]) vars.set(m[1], m[2]);
        }
        const need = (k: string): string => {
          const v = vars.get(k);
          if (!v) throw new Error(`${GO_TOOLS_SCRIPT} printed no ${k}=…:\n${stdout}`);
          return v;
        };
        try {
          resolve({
            helm: need('HELM'),
            promtool: need('PROMTOOL'),
            crdDir: need('PROMETHEUS_OPERATOR_CRDS'),
          });
        } catch (e) {
          reject(e);
        }
      },
    );
  });
  return cached;
}
