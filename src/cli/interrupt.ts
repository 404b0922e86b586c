/**
 * Ctrl-C (SIGINT) and SIGTERM while a command writes: each cleanup registered removes what the
 * command started (temporary files, a scratch folder), then the process exits 130, as a shell
 * reports a job ended by Ctrl-C. Cleanups run newest first. Without a cleanup registered, Node's default applies.
 */
const cleanups = new Set<() => void>();

const handler = () => {
  // the last registered first, as finally blocks unwind: a file's cleanup before its folder's
  for (const c of [...cleanups].reverse()) {
    try {
      c();
    } catch {
      // the next one still runs: an interrupt must not leave more behind than it can help
    }
  }
  process.exit(130);
};

/** Runs `cleanup` if the process is interrupted before the returned function is called. */
export function onInterrupt(cleanup: () => void): () => void {
  if (cleanups.size === 0) {
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  }
  cleanups.add(cleanup);
  return () => {
    cleanups.delete(cleanup);
    if (cleanups.size === 0) {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    }
  };
}
