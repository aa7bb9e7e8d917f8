import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NVML, NvmlError } from '../../../src/host/nvml/api.ts';
import { nvmlLoader } from '../../../src/host/nvml/binding.ts';
import { buildFakeNvml } from '../../support/fake-nvml/build.ts';

/**
 * An NVML from an older driver: init and the count, no device calls, no event wait. Built with and
 * without nvmlErrorString, whose text the binding uses when it is there.
 */
const OLD_DRIVER = `
int nvmlInit_v2(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 1; return 0; }
int nvmlEventSetCreate(void **set) { static int s; *set = &s; return 0; }
#ifdef WITH_ERROR_STRING
const char *nvmlErrorString(int r) { return r == 13 ? "Function Not Found" : "Unknown Error"; }
#endif
`;

let dir: string;

function buildOldDriver(name: string, withErrorString: boolean): string {
  const source = join(dir, 'old-driver.c');
  writeFileSync(source, OLD_DRIVER);
  const lib = join(dir, name);
  const define = withErrorString ? ['-DWITH_ERROR_STRING'] : [];
  execFileSync('gcc', ['-shared', '-fPIC', ...define, '-o', lib, source], { stdio: 'pipe' });
  return lib;
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'nvml-loader-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('nvmlLoader', () => {
  it('says which file is missing and why, without throwing; finds it once it is installed', () => {
    const path = join(dir, 'driver', 'libnvidia-ml.so.1');
    const load = nvmlLoader(path);
    const missing = load();
    assert.ok(missing instanceof Error);
    assert.match(missing.message, new RegExp(`^cannot load ${path}: .*No such file or directory`));
    mkdirSync(join(dir, 'driver'));
    copyFileSync(buildFakeNvml(), path);
    const nvml = load();
    assert.ok(!(nvml instanceof Error), String(nvml));
    assert.equal(load(), nvml, 'loaded once, then the same binding');
  });

  it('without koffi, or on a platform whose struct layout it does not read, says so', () => {
    const noKoffi = nvmlLoader(buildFakeNvml(), () => {
      throw new Error("Cannot find module 'koffi'");
    })();
    assert.ok(noKoffi instanceof Error);
    assert.match(noKoffi.message, /^koffi unavailable: Cannot find module 'koffi'/);
    const mac = nvmlLoader(buildFakeNvml(), undefined, { os: 'darwin', arch: 'arm64' })();
    assert.ok(mac instanceof Error);
    assert.match(mac.message, /64-bit Linux \(x64, arm64\) only, not darwin\/arm64/);
    const arm = nvmlLoader(buildFakeNvml(), undefined, { os: 'linux', arch: 'arm64' })();
    assert.ok(!(arm instanceof Error), 'control: linux/arm64 is bound');
  });

  it('a symbol an older driver lacks fails that call alone with FUNCTION_NOT_FOUND', async () => {
    const nvml = nvmlLoader(buildOldDriver('libnvml-old.so', true))();
    assert.ok(!(nvml instanceof Error), String(nvml));
    assert.equal(nvml.init(), undefined);
    assert.equal(nvml.deviceCount(), 1, 'control: the symbols it has answer');
    const handle = nvml.handle(0);
    assert.ok(handle instanceof NvmlError);
    assert.deepEqual(
      [handle.code, handle.message],
      [NVML.FUNCTION_NOT_FOUND, 'nvmlDeviceGetHandleByIndex_v2: Function Not Found (13)'],
    );
    const set = nvml.eventSetCreate();
    assert.ok(!(set instanceof NvmlError));
    const wait = await nvml.eventWait(set, 10);
    assert.ok(wait instanceof NvmlError);
    assert.equal(wait.code, NVML.FUNCTION_NOT_FOUND);
  });

  it('without nvmlErrorString the error says the code alone', () => {
    const nvml = nvmlLoader(buildOldDriver('libnvml-older.so', false))();
    assert.ok(!(nvml instanceof Error), String(nvml));
    const version = nvml.driverVersion();
    assert.ok(version instanceof NvmlError);
    assert.equal(version.message, 'nvmlSystemGetDriverVersion: NVML error 13 (13)');
  });
});
