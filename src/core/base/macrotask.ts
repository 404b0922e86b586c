/**
 * A turn of the host's event loop: resolves from a task of its own, after the tasks already
 * queued (messages, a nested worker's start), where `await` alone runs on in the same task.
 * A MessageChannel message, not a timer: nested timers are held to at least 4 ms.
 */
export function macrotask(): Promise<void> {
  return new Promise((resolve) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      resolve();
    };
    ch.port2.postMessage(null);
  });
}
