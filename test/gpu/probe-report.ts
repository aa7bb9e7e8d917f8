/** What probe.ts prints: NVML's state on this machine and every enabled check's answer per GPU. */
export interface ProbeSlot {
  readonly check: string;
  /** The GPU's index; null for a node-wide check (the device count). */
  readonly gpu: number | null;
  readonly findings: readonly {
    readonly severity: string;
    readonly reason: string;
    readonly message: string;
  }[];
  readonly gauges: Readonly<Record<string, number>>;
  /** NVML could not answer (NOT_SUPPORTED is no error): the check has no verdict. */
  readonly error?: string;
}

export interface ProbeGpu {
  readonly index: number;
  readonly busId: string;
  readonly uuid: string;
  readonly name: string;
}

export type ProbeReport =
  | { readonly state: 'no_library' | 'no_gpu' | 'failed'; readonly why: string }
  | {
      readonly state: 'ready';
      readonly driver: string;
      /** NVIDIA GPUs on the PCI bus (null: sysfs unreadable). */
      readonly onBus: number | null;
      readonly gpus: readonly ProbeGpu[];
      /** GPUs that answered GPU_IS_LOST at start. */
      readonly lost: readonly number[];
      /** Checks the config turns off. */
      readonly disabled: readonly string[];
      readonly slots: readonly ProbeSlot[];
    };
