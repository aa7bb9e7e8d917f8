import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { libcLoader, libcSonames, libraryLoader } from '../../../src/host/clib/libc.ts';

const SRC = join(import.meta.dirname, '..', '..', '..', 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('libcLoader', () => {
  it('loads nothing until first asked, then once, by soname', () => {
    const loads: (string | null)[] = [];
    let required = 0;
    const fakeKoffi = {
      load: (name: string | null) => {
        loads.push(name);
        if (name !== libcSonames()[1]) throw new Error(`${name}: cannot open shared object file`);
        return { func: (sig: string) => sig };
      },
    };
    const libc = libcLoader(() => {
      required++;
      return fakeKoffi;
    });
    assert.equal(required, 0, 'not loaded at creation');
    const first = libc();
    const second = libc();
    assert.ok(!(first instanceof Error));
    assert.equal(first, second);
    assert.equal(required, 1);
    assert.deepEqual(loads, libcSonames(), 'glibc first, then musl; never dlopen(NULL)');
  });

  it('says what it tried when no libc loads, and does not try again', () => {
    let required = 0;
    const libc = libcLoader(() => {
      required++;
      throw new Error("Cannot find module 'koffi'");
    });
    const err = libc();
    assert.ok(err instanceof Error);
    assert.match(err.message, /koffi/);
    assert.equal(libc(), err);
    assert.equal(required, 1);
  });

  it('calls into the real libc', { skip: process.platform !== 'linux' }, () => {
    const libc = libcLoader()();
    assert.ok(!(libc instanceof Error), String(libc));
    const getpid = libc.func('int getpid()') as () => number;
    assert.equal(getpid(), process.pid);
  });

  it('loads another library by name through the same koffi, trying again until it loads', () => {
    const loads: string[] = [];
    let installed = false;
    const fakeKoffi = {
      load: (name: string) => {
        loads.push(name);
        if (!installed) throw new Error(`${name}: cannot open shared object file: No such file or directory`);
        return { func: (sig: string) => sig };
      },
    };
    const nvml = libraryLoader('/run/nvidia/driver/usr/lib64/libnvidia-ml.so.1', () => fakeKoffi);
    assert.deepEqual(loads, [], 'not loaded at creation');
    const missing = nvml();
    assert.ok(missing instanceof Error);
    assert.match(
      missing.message,
      /^cannot load \/run\/nvidia\/driver\/usr\/lib64\/libnvidia-ml\.so\.1: .*No such file/,
    );
    installed = true;
    const lib = nvml();
    assert.ok(!(lib instanceof Error));
    assert.equal(nvml(), lib);
    assert.equal(loads.length, 2, 'tried again after the failure, then kept the library');
    const noKoffi = libraryLoader('libnvidia-ml.so.1', () => {
      throw new Error("Cannot find module 'koffi'");
    })();
    assert.ok(noKoffi instanceof Error);
    assert.match(noKoffi.message, /^koffi unavailable/);
  });

  it('is the only module that loads koffi', () => {
    const users = sources(SRC)
      .filter((f) => /(?:import\(|require\(|from )['"]koffi['"]|\)\('koffi'\)/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(SRC, f));
    assert.deepEqual(users, ['host/clib/libc.ts']);
  });
});
