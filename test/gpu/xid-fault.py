#!/usr/bin/env python3
"""Makes the NVIDIA driver report a real Xid the harmless way (../shared/reference/gpu.md section 0).

  python3 xid-fault.py 31   a kernel writes to address 0 (unmapped): an MMU fault, Xid 31
  python3 xid-fault.py 43   a kernel executes `trap`: the driver stops the channel, Xid 43

Both are ordinary user-program bugs: the driver kills this process's CUDA context and the GPU stays
usable (no reset; nothing here resets or reconfigures the GPU). Run each in its own process: the
context is dead after the fault.

Ways, tried in this order (NPD_XID_FAULT_WAY=cupy|nvcc|driver picks one):
  cupy    cupy.RawKernel, compiled by NVRTC
  nvcc    a tiny CUDA C program built with nvcc into a temporary folder
  driver  ctypes over libcuda.so.1 (cuModuleLoadData of a PTX string): needs nothing but the driver

Prints one JSON line: {"xid", "way", "error", "pid"}: the CUDA error the fault raised and the pid of the
process that faulted (the driver prints it in the Xid line); exits 0
when the kernel faulted as intended, 2 when no way could run, 3 when the kernel did not fault.
"""
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile

# A pointer parameter the compiler cannot see is null, so the store is kept (a literal null store is
# undefined behaviour that a compiler may turn into a trap, which would give Xid 43 instead of 31).
CUDA_SOURCE = r"""
extern "C" __global__ void write_to(int *p) { *(volatile int *)p = 42; }
extern "C" __global__ void trap_now() { asm volatile("trap;"); }
"""

PROGRAM = CUDA_SOURCE + r"""
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
int main(int argc, char **argv) {
  cudaError_t init = cudaFree(0);
  if (init != cudaSuccess) {
    printf("%s\n", cudaGetErrorName(init));
    return 2;
  }
  if (argc > 1 && strcmp(argv[1], "31") == 0) write_to<<<1, 1>>>(nullptr);
  else trap_now<<<1, 1>>>();
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 3 : 0;
}
"""

# The same two kernels in PTX (ISA 7.0, sm_75: the driver JIT-compiles it for the GPU at hand).
PTX = b"""
.version 7.0
.target sm_75
.address_size 64

.visible .entry write_to(.param .u64 write_to_p)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [write_to_p];
  mov.u32 %r1, 42;
  st.volatile.global.u32 [%rd1], %r1;
  ret;
}

.visible .entry trap_now()
{
  trap;
  ret;
}
\x00"""


class Unavailable(Exception):
    """This way cannot run here (no CuPy, no nvcc, no libcuda): try the next."""


def by_cupy(xid):
    try:
        import cupy
        import numpy
    except ImportError as e:
        raise Unavailable(f"cupy: {e}")
    name = "write_to" if xid == 31 else "trap_now"
    try:
        kernel = cupy.RawKernel(CUDA_SOURCE, name)
        kernel.compile()
    except Exception as e:  # no GPU, no NVRTC: the launch below would not be the fault we want
        raise Unavailable(f"cupy: {type(e).__name__}: {e}")
    args = (numpy.uint64(0),) if xid == 31 else ()
    try:
        kernel((1,), (1,), args)
        cupy.cuda.runtime.deviceSynchronize()
    except Exception as e:  # CUDARuntimeError or CUDADriverError: the fault we asked for
        return f"{type(e).__name__}: {e}", os.getpid()
    return None, os.getpid()


def by_nvcc(xid):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise Unavailable("nvcc: not on PATH")
    with tempfile.TemporaryDirectory(prefix="xid-fault-") as tmp:
        src, exe = os.path.join(tmp, "xid.cu"), os.path.join(tmp, "xid")
        with open(src, "w") as f:
            f.write(PROGRAM)
        built = subprocess.run([nvcc, "-o", exe, src], capture_output=True, text=True, timeout=120)
        if built.returncode != 0:
            raise Unavailable(f"nvcc: {built.stderr.strip()[-300:]}")
        run = subprocess.Popen([exe, str(xid)], stdout=subprocess.PIPE, text=True)
        out, _ = run.communicate(timeout=60)
    if run.returncode == 2:
        raise Unavailable(f"nvcc: CUDA did not start: {out.strip()}")
    # The driver names the faulting process: this program, not the Python that built it.
    return (out.strip() if run.returncode == 0 else None), run.pid


def driver_api():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        raise Unavailable(f"driver: {e}")
    vp, u = ctypes.c_void_p, ctypes.c_uint
    cuda.cuModuleLoadData.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p]
    cuda.cuModuleGetFunction.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
    cuda.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(vp), ctypes.c_int]
    cuda.cuCtxSetCurrent.argtypes = [vp]
    cuda.cuLaunchKernel.argtypes = [vp, u, u, u, u, u, u, u, vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]
    cuda.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return cuda


def by_driver(xid):
    cuda = driver_api()

    def call(what, result):
        if result != 0:  # before the launch: no GPU, or no context; nothing has faulted
            raise Unavailable(f"driver: {what}: CUresult {result}")

    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    call("cuInit", cuda.cuInit(0))
    call("cuDeviceGet", cuda.cuDeviceGet(ctypes.byref(dev), 0))
    call("cuDevicePrimaryCtxRetain", cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev.value))
    call("cuCtxSetCurrent", cuda.cuCtxSetCurrent(ctx))
    call("cuModuleLoadData", cuda.cuModuleLoadData(ctypes.byref(mod), PTX))
    name = b"write_to" if xid == 31 else b"trap_now"
    call("cuModuleGetFunction", cuda.cuModuleGetFunction(ctypes.byref(fn), mod, name))
    address = ctypes.c_uint64(0)
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(address), ctypes.c_void_p))
    launched = cuda.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, None, params if xid == 31 else None, None)
    result = launched if launched != 0 else cuda.cuCtxSynchronize()
    if result == 0:
        return None, os.getpid()
    text = ctypes.c_char_p()
    cuda.cuGetErrorName(result, ctypes.byref(text))
    return f"{(text.value or b'?').decode()} ({result})", os.getpid()


WAYS = {"cupy": by_cupy, "nvcc": by_nvcc, "driver": by_driver}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("31", "43"):
        print("usage: xid-fault.py 31|43", file=sys.stderr)
        return 64
    xid = int(sys.argv[1])
    chosen = os.environ.get("NPD_XID_FAULT_WAY")
    ways = [chosen] if chosen else list(WAYS)
    skipped = []
    for way in ways:
        try:
            error, pid = WAYS[way](xid)
        except Unavailable as e:
            skipped.append(str(e))
            continue
        print(json.dumps({"xid": xid, "way": way, "error": error, "pid": pid}), flush=True)
        return 0 if error else 3
    print(json.dumps({"xid": xid, "way": None, "error": None, "unavailable": skipped}), flush=True)
    return 2


if __name__ == "__main__":
    sys.exit(main())
