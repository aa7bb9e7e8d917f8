import type { Gauge, Registry } from 'prom-client';
import { counter, gauge } from '../core/metrics.ts';

/** npd_config_reload*: what each hot reload of the config files came to. */
export function reloadMetrics(registry: Registry) {
  const total = counter(registry, {
    name: 'npd_config_reloads_total',
    help: 'Config reloads by result.',
    labelNames: ['result'],
  });
  const ok: Gauge = gauge(registry, {
    name: 'npd_config_last_reload_successful',
    help: '1 if the last config reload was applied, 0 if it was rejected.',
  });
  const inPlace = counter(registry, {
    name: 'npd_config_reconfigure_failures_total',
    help: 'Monitors whose in-place reconfigure threw during a reload; each was restarted instead.',
  });
  total.inc({ result: 'success' }, 0);
  total.inc({ result: 'failure' }, 0);
  ok.set(1);
  return {
    reconfigureFailed: () => inPlace.inc(),
    result(success: boolean) {
      total.inc({ result: success ? 'success' : 'failure' });
      ok.set(success ? 1 : 0);
    },
  };
}
