// prom-client ships types only for its index, which also loads cluster support, the pushgateway
// client and default metrics (about 18 MiB of RSS). The agent imports the four classes it uses
// directly; these declarations give them the index's types.
declare module 'prom-client/lib/counter.js' {
  import type { Counter } from 'prom-client';

  const CounterClass: typeof Counter;
  export default CounterClass;
}
declare module 'prom-client/lib/gauge.js' {
  import type { Gauge } from 'prom-client';

  const GaugeClass: typeof Gauge;
  export default GaugeClass;
}
declare module 'prom-client/lib/histogram.js' {
  import type { Histogram } from 'prom-client';

  const HistogramClass: typeof Histogram;
  export default HistogramClass;
}
declare module 'prom-client/lib/registry.js' {
  import type { Registry } from 'prom-client';

  const RegistryClass: typeof Registry;
  export default RegistryClass;
}
