/**
 * Counts event-loop turns (setImmediate callbacks) while `work` runs: a function that holds the loop
 * for its whole duration lets none through, one that yields (or works off the main thread) lets many.
 */
export async function eventLoopTurnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  let done = false;
  const tick = () => {
    turns++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    return { result: await work(), turns };
  } finally {
    done = true;
  }
}
