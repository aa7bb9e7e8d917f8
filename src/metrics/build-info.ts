import type { Registry } from 'prom-client';
import { gauge } from '../core/metrics.ts';

/** npd_build_info: 1, labelled with what runs, so a fleet's versions are one `count by (version)` away. */
export function registerBuildInfo(registry: Registry, build: { version: string; commit: string }): void {
  gauge(registry, {
    name: 'npd_build_info',
    help: 'Always 1; the version and commit of the running agent are its labels.',
    labelNames: ['version', 'commit'],
  }).set(build, 1);
}
