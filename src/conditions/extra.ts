/**
 * Condition types of the shipped configs that reach the Node only with --extra-conditions. They stay
 * tracked (problem_gauge, /metrics alerts, a Warning event when one turns True), but a `kubectl describe
 * node` row is kept for problems that latch until a reboot or a repair. docs/consumers.md "Default
 * conditions" gives the reasoning per type.
 */
export const EXTRA_CONDITIONS: readonly string[] = Object.freeze([
  'ReadonlyRootFilesystem',
  'FilesystemSpaceLow',
  'FilesystemInodesLow',
  'FileHandlesLow',
  'ProcessIDsLow',
  'ConntrackEntriesLow',
  'NetworkLinkFlapping',
]);

/** Which condition types are written to the Node: all with --extra-conditions, else all but the extra ones. */
export function publishedConditions(extraConditions: boolean): (type: string) => boolean {
  return (type) => extraConditions || !EXTRA_CONDITIONS.includes(type);
}
