import type { DeviceHandle, EventSet } from './api.ts';

/**
 * The C addresses behind the opaque handles the binding hands out. A device's address is kept both ways:
 * by index, to pass it back to NVML, and by address, so an event (whose nvmlEventData_t names the device
 * by address) can say which GPU it came from.
 */
export class HandleTable {
  private readonly devices = new Map<number, bigint>();
  private readonly indexByAddress = new Map<bigint, number>();
  private readonly sets = new Map<number, bigint>();
  private nextSet = 1;

  device(index: number, address: bigint): DeviceHandle {
    this.devices.set(index, address);
    this.indexByAddress.set(address, index);
    return { index };
  }

  /** The address of a handle this binding gave out, else undefined (the call answers INVALID_ARGUMENT). */
  deviceAddress(d: DeviceHandle): bigint | undefined {
    return this.devices.get(d.index);
  }

  indexOf(address: bigint): number | undefined {
    return this.indexByAddress.get(address);
  }

  addSet(address: bigint): EventSet {
    const id = this.nextSet++;
    this.sets.set(id, address);
    return { id };
  }

  setAddress(set: EventSet): bigint | undefined {
    return this.sets.get(set.id);
  }

  removeSet(set: EventSet): void {
    this.sets.delete(set.id);
  }

  /** After nvmlShutdown every handle is void. */
  clear(): void {
    this.devices.clear();
    this.indexByAddress.clear();
    this.sets.clear();
  }
}
