/**
 * A deterministic, realistic kernel log: mostly routine driver, network, storage and audit chatter,
 * with problem lines mixed in at about the rate busy nodes show (~1%).
 */
const ROUTINE = [
  'IPv6: ADDRCONF(NETDEV_CHANGE): veth{n}: link becomes ready',
  'cni0: port {n}(veth{h}) entered forwarding state',
  'cni0: port {n}(veth{h}) entered disabled state',
  'device veth{h} entered promiscuous mode',
  'EXT4-fs (nvme0n1p{n}): mounted filesystem with ordered data mode. Opts: (null). Quota mode: none.',
  'audit: type=1400 audit({n}.123:{n}): apparmor="STATUS" operation="profile_load" profile="unconfined" name="cri-containerd.apparmor.d" pid={n} comm="apparmor_parser"',
  'overlayfs: upper fs does not support RENAME_WHITEOUT.',
  'xfs filesystem being mounted at /var/lib/kubelet/pods/{h}/volumes supports timestamps until 2038',
  'IPVS: rr: TCP 10.96.0.{n}:443 - no destination available',
  'nf_conntrack: default automatic helper assignment has been turned off for security reasons',
  'eth0: renamed from veth{h}',
  'Memory cgroup stats for /kubepods/burstable/pod{h}: anon {n}kB file {n}kB',
  'systemd-journald[{n}]: Received client request to flush runtime journal.',
  'TCP: request_sock_TCP: Possible SYN flooding on port {n}. Sending cookies.  Check SNMP counters.',
  'usb 1-1: new high-speed USB device number {n} using xhci_hcd',
  "process '{h}' launched '/bin/sh' with NULL argv: empty string added",
  'loop{n}: detected capacity change from 0 to {n}',
  'EXT4-fs (loop{n}): mounted filesystem without journal. Quota mode: none.',
];

const PROBLEMS = [
  'Out of memory: Killed process {n} (java) total-vm:{n}kB, anon-rss:{n}kB, file-rss:{n}kB, shmem-rss:0kB, UID:0 pgtables:{n}kB oom_score_adj:{n}',
  'INFO: task kworker/{n}:1:{n} blocked for more than 120 seconds.',
  'INFO: task docker:{n} blocked for more than 120 seconds.',
  'unregister_netdevice: waiting for eth0 to become free. Usage count = {n}',
  'BUG: kernel NULL pointer dereference, address: 00000000000000{n}',
  'EXT4-fs error (device nvme1n1): ext4_find_entry:1455: inode #{n}: comm kubelet: reading directory lblock 0',
  'Buffer I/O error on dev nvme1n1, logical block {n}, async page read',
  '{n}.{n}: [Hardware Error]: event severity: corrected',
  'EXT4-fs (nvme1n1): Remounting filesystem read-only',
  'oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=cri-containerd-{h}.scope,mems_allowed=0,oom_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{h}.slice,task_memcg=/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{h}.slice/cri-containerd-{h}.scope,task=java,pid={n},uid=0',
  'XFS (nvme1n1): Filesystem has been shut down due to log error (0x2).',
  'nvme1n1: Read(0x2) @ LBA {n}, 8 blocks, Unrecovered Read Error (sct 0x2 / sc 0x81) DNR',
  'NVRM: Xid (PCI:0000:3b:00 GPU-I:05): 94, pid={n}, Contained: CE User Channel (0x9). RST: No, D-RST: No',
  'neighbour: arp_cache: neighbor table overflow!',
];

/** A small LCG so the corpus is identical on every run and machine. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function fill(template: string, next: () => number): string {
  return template
    .replaceAll('{n}', () => String(Math.floor(next() * 90000) + 10))
    .replaceAll('{h}', () => Math.floor(next() * 2 ** 32).toString(16));
}

export function kernelCorpus(lines: number, problemRate = 0.01, seed = 42): string[] {
  const next = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const pool = next() < problemRate ? PROBLEMS : ROUTINE;
    out.push(fill(pool[Math.floor(next() * pool.length)] as string, next));
  }
  return out;
}
