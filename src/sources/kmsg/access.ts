/** A thrown value as an Error (syscall wrappers throw errno errors; anything else is wrapped). */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/**
 * What to do when /dev/kmsg cannot be opened for a reason a retry will not cure. EPERM is what a
 * container gets from its device cgroup (the runtime's default device allowlist has no c 1:11, and a
 * hostPath volume does not change it), and what any process without CAP_SYSLOG gets when
 * kernel.dmesg_restrict=1 (devkmsg_open -> check_syslog_permissions in kernel/printk/printk.c).
 */
export function kmsgAccessHint(path: string, err: Error): string | undefined {
  if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  return (
    `${path}: EPERM: the container needs privileged or the kmsg device; see docs/install.md ` +
    '(outside a container: run as root or with CAP_SYSLOG)'
  );
}
