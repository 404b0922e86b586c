// The words the load store, its worker link and its Add-or-Replace helpers share.

/** Add the files to the capture shown, or open them as a new capture. */
export type LoadMode = 'add' | 'replace';
/** where the capture's files came from: the embedded sample, the user, or the browser's store (a reload) */
export type CaptureSource = 'sample' | 'files' | 'stored';
