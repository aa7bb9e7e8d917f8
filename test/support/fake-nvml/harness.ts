import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFakeNvml } from './build.ts';
import {
  appendFakeNvmlEvents,
  type FakeNvmlEvent,
  type FakeNvmlState,
  fakeNvmlEnv,
  writeFakeNvmlState,
} from './state.ts';

/** The fake NVML for tests that load it into this process (the binding's, the monitor's). */
export interface FakeNvmlHarness {
  /** The built libnvidia-ml.so.1, for nvmlLoader(library). */
  readonly library: string;
  readonly env: { readonly FAKE_NVML_STATE: string; readonly FAKE_NVML_EVENTS: string };
  /** Scripts the answers from the next call on (a whole new state: earlier keys are gone). */
  state(state: FakeNvmlState): void;
  /** No state file: the default healthy H200. */
  defaults(): void;
  /** Appends events for the waits to deliver. */
  events(...events: FakeNvmlEvent[]): void;
  /** Empties the events file (event sets created afterwards read it from its start). */
  clearEvents(): void;
  /** Removes the files and the environment variables. */
  close(): void;
}

/**
 * Builds the fake, makes a temporary directory for its state and events files and points this process's
 * environment at them (the fake reads FAKE_NVML_STATE and FAKE_NVML_EVENTS on every call).
 */
export function fakeNvmlHarness(): FakeNvmlHarness {
  const library = buildFakeNvml();
  const dir = mkdtempSync(join(tmpdir(), 'fake-nvml-'));
  const env = fakeNvmlEnv(dir);
  Object.assign(process.env, env);
  writeFileSync(env.FAKE_NVML_EVENTS, '');
  return {
    library,
    env,
    state: (state) => writeFakeNvmlState(env.FAKE_NVML_STATE, state),
    defaults: () => rmSync(env.FAKE_NVML_STATE, { force: true }),
    events: (...events) => appendFakeNvmlEvents(env.FAKE_NVML_EVENTS, ...events),
    clearEvents: () => writeFileSync(env.FAKE_NVML_EVENTS, ''),
    close: () => {
      delete process.env.FAKE_NVML_STATE;
      delete process.env.FAKE_NVML_EVENTS;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
