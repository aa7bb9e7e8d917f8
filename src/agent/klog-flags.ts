import type { FlagSpec } from '../config/flag-parser.ts';
import { IGNORED } from './flag-specs.ts';

/**
 * klog v2's whole flag set (k8s.io/klog/v2 klog.go, InitFlags), accepted and ignored so DaemonSet
 * args written for NPD or any other klog program start unchanged: logs always go to stdout, in the
 * format of --log-format, at the level of LOG_LEVEL. NPD itself registers only --v, --vmodule and
 * --logtostderr; the rest are accepted because copying a kubelet-style args list must not exit 2.
 */
const KLOG = 'klog flag, ignored';
export const KLOG_FLAGS: readonly FlagSpec[] = [
  IGNORED('v', 'int', 'klog verbosity, ignored; use LOG_LEVEL=debug instead'),
  IGNORED('vmodule', 'string', KLOG),
  IGNORED('logtostderr', 'bool', 'klog flag, ignored; logs always go to stdout'),
  IGNORED('alsologtostderr', 'bool', KLOG),
  IGNORED('log_dir', 'string', KLOG),
  IGNORED('log_file', 'string', KLOG),
  IGNORED('log_file_max_size', 'int', KLOG),
  IGNORED('add_dir_header', 'bool', KLOG),
  IGNORED('skip_headers', 'bool', KLOG),
  IGNORED('skip_log_headers', 'bool', KLOG),
  IGNORED('one_output', 'bool', KLOG),
  IGNORED('stderrthreshold', 'string', KLOG),
  IGNORED('log_backtrace_at', 'string', KLOG),
  // Added to klog v2 in 2025 (kubernetes/klog#432); manifests that opt out of the legacy behaviour set it.
  IGNORED('legacy_stderr_threshold_behavior', 'bool', KLOG),
];
