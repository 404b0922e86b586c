// Where sql writes its result: --output's path resolved to a file replaced or a pipe written in
// place, and a stream written with backpressure that stops when its reader has gone.
import { lstatSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * stdout (or --output's stream) for a stream of writes: waits for 'drain' when the stream's
 * buffer is full (a slow pipe), and stops (closed) once the reader has gone (`| head`: EPIPE),
 * which is no error, or a write failed (a full disk, /dev/full: ENOSPC), which is: `error`.
 */
export class Out {
  closed = false;
  /** the write error, other than the reader gone: what was not written is lost, the command fails */
  error: Error | null = null;
  private readonly onError = (e: NodeJS.ErrnoException) => {
    this.closed = true;
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') this.error ??= e;
  };

  constructor(private readonly stream: NodeJS.WritableStream = process.stdout) {
    stream.on('error', this.onError);
  }

  write = async (s: string): Promise<void> => {
    if (this.closed) return;
    if (!this.stream.write(s) && !this.closed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.stream.off('drain', done);
          this.stream.off('close', done);
          this.stream.off('error', done);
          resolve();
        };
        this.stream.on('drain', done);
        this.stream.on('close', done);
        this.stream.on('error', done);
      });
    }
  };

  end(): void {
    this.stream.off('error', this.onError);
  }
}

/**
 * Where --output writes, by what is at the path: a regular file or nothing is replaced (a
 * temporary file beside it, renamed over it at the end), a pipe or a character device is written
 * in place (a rename would put a regular file where /dev/null was), a symlink leads to what it
 * points to (its target replaced, the link kept; a dangling one's target made), a folder or
 * anything else is refused.
 */
export function outputTarget(path: string): { replace: string } | { inPlace: string } | { error: string } {
  const refuse = (why: string) => ({ error: `cannot write ${path}: ${why}` });
  let at = path;
  try {
    for (let hops = 0; hops <= 40; hops++) {
      const l = lstatSync(at, { throwIfNoEntry: false });
      if (l === undefined) return { replace: at };
      let st = l;
      if (l.isSymbolicLink()) {
        const to = statSync(at, { throwIfNoEntry: false });
        if (to === undefined) {
          // dangling: the file it names is made (one link at a time: a chain may dangle anywhere)
          at = resolve(dirname(at), readlinkSync(at));
          continue;
        }
        // a regular file's real path, to rename over it; a pipe or device through the link
        // (/dev/stdout leads to /proc/self/fd/1, whose target pipe:[N] is no path)
        if (to.isFile()) return { replace: realpathSync(at) };
        st = to;
      }
      if (st.isFile()) return { replace: at };
      if (st.isFIFO() || st.isCharacterDevice()) return { inPlace: at };
      if (st.isDirectory()) return refuse('it is a folder (give a file name in it)');
      return refuse('it is neither a regular file, a pipe nor a character device');
    }
    return refuse('too many levels of symbolic links');
  } catch (e) {
    return refuse((e as Error).message);
  }
}
