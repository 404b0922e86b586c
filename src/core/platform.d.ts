// What the core takes from its host, a browser (page or worker) or Node: the web platform APIs
// both have, declared in the shapes the core uses. `tsc -p src/core` (src/core/tsconfig.json,
// run by `npm run typecheck`) checks the core with these and ES2022 alone, no DOM and no Node
// types: a DOM or Node API the core reaches for is a type error there. The rest of src/ is checked
// by the root tsconfig.json (DOM and Node), which leaves this file out.

interface QueuingStrategy {
  highWaterMark?: number;
}

type ReadableStreamReadResult<T> = { done: false; value: T } | { done: true; value?: undefined };

interface ReadableStreamDefaultReader<R> {
  read(): Promise<ReadableStreamReadResult<R>>;
  cancel(reason?: unknown): Promise<void>;
  releaseLock(): void;
  readonly closed: Promise<void>;
}

interface ReadableStreamDefaultController<R> {
  enqueue(chunk: R): void;
  close(): void;
  error(e?: unknown): void;
  readonly desiredSize: number | null;
}

interface UnderlyingDefaultSource<R> {
  start?(controller: ReadableStreamDefaultController<R>): void | Promise<void>;
  pull?(controller: ReadableStreamDefaultController<R>): void | Promise<void>;
  cancel?(reason?: unknown): void | Promise<void>;
}

interface ReadableStream<R = unknown> {
  readonly locked: boolean;
  getReader(): ReadableStreamDefaultReader<R>;
  cancel(reason?: unknown): Promise<void>;
  pipeThrough<T>(transform: { writable: WritableStream<R>; readable: ReadableStream<T> }): ReadableStream<T>;
  pipeTo(destination: WritableStream<R>, options?: { preventClose?: boolean; preventAbort?: boolean; preventCancel?: boolean }): Promise<void>;
  tee(): [ReadableStream<R>, ReadableStream<R>];
  [Symbol.asyncIterator](): AsyncIterableIterator<R>;
}
declare var ReadableStream: {
  prototype: ReadableStream;
  new <R = unknown>(source?: UnderlyingDefaultSource<R>, strategy?: QueuingStrategy): ReadableStream<R>;
};

interface WritableStreamDefaultWriter<W> {
  write(chunk: W): Promise<void>;
  close(): Promise<void>;
  abort(reason?: unknown): Promise<void>;
  releaseLock(): void;
  readonly ready: Promise<void>;
  readonly closed: Promise<void>;
}

interface WritableStreamDefaultController {
  error(e?: unknown): void;
}

interface UnderlyingSink<W> {
  start?(controller: WritableStreamDefaultController): void | Promise<void>;
  write?(chunk: W, controller: WritableStreamDefaultController): void | Promise<void>;
  close?(): void | Promise<void>;
  abort?(reason?: unknown): void | Promise<void>;
}

interface WritableStream<W = unknown> {
  readonly locked: boolean;
  getWriter(): WritableStreamDefaultWriter<W>;
  abort(reason?: unknown): Promise<void>;
  close(): Promise<void>;
}
declare var WritableStream: {
  prototype: WritableStream;
  new <W = unknown>(sink?: UnderlyingSink<W>, strategy?: QueuingStrategy): WritableStream<W>;
};

interface TransformStreamDefaultController<O> {
  enqueue(chunk: O): void;
  error(reason?: unknown): void;
  terminate(): void;
  readonly desiredSize: number | null;
}

interface Transformer<I, O> {
  start?(controller: TransformStreamDefaultController<O>): void | Promise<void>;
  transform?(chunk: I, controller: TransformStreamDefaultController<O>): void | Promise<void>;
  flush?(controller: TransformStreamDefaultController<O>): void | Promise<void>;
  cancel?(reason?: unknown): void | Promise<void>;
}

interface TransformStream<I = unknown, O = unknown> {
  readonly readable: ReadableStream<O>;
  readonly writable: WritableStream<I>;
}
declare var TransformStream: {
  prototype: TransformStream;
  new <I = unknown, O = unknown>(
    transformer?: Transformer<I, O>,
    writableStrategy?: QueuingStrategy,
    readableStrategy?: QueuingStrategy,
  ): TransformStream<I, O>;
};

type BlobPart = ArrayBuffer | ArrayBufferView | Blob | string;

interface Blob {
  readonly size: number;
  readonly type: string;
  slice(start?: number, end?: number, contentType?: string): Blob;
  stream(): ReadableStream<Uint8Array<ArrayBuffer>>;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array<ArrayBuffer>>;
  text(): Promise<string>;
}
declare var Blob: {
  prototype: Blob;
  new (parts?: BlobPart[], options?: { type?: string }): Blob;
};

interface File extends Blob {
  readonly name: string;
  readonly lastModified: number;
}
declare var File: {
  prototype: File;
  new (parts: BlobPart[], name: string, options?: { type?: string; lastModified?: number }): File;
};

interface TextDecoder {
  readonly encoding: string;
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  decode(input?: ArrayBufferView | ArrayBuffer, options?: { stream?: boolean }): string;
}
declare var TextDecoder: {
  prototype: TextDecoder;
  new (label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean }): TextDecoder;
};

interface TextEncoder {
  readonly encoding: string;
  encode(input?: string): Uint8Array<ArrayBuffer>;
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}
declare var TextEncoder: {
  prototype: TextEncoder;
  new (): TextEncoder;
};

declare var performance: { now(): number; readonly timeOrigin: number };

declare var crypto: { getRandomValues<T extends ArrayBufferView>(array: T): T };

declare var console: {
  log(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
};

declare function queueMicrotask(callback: () => void): void;
declare function setTimeout(handler: () => void, timeout?: number): unknown;
declare function clearTimeout(id: unknown): void;
declare function structuredClone<T>(value: T): T;

declare class DOMException extends Error {
  constructor(message?: string, name?: string);
  readonly code: number;
}

declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
    grow(delta: number): number;
  }
  class Module {
    constructor(bytes: ArrayBufferView | ArrayBuffer);
  }
  type ImportValue = Memory | ((...args: never[]) => unknown) | number;
  type Imports = Record<string, Record<string, ImportValue>>;
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Record<string, unknown>;
  }
  function validate(bytes: ArrayBufferView | ArrayBuffer): boolean;
}

interface MessagePort {
  onmessage: ((e: { data: unknown }) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
}
declare var MessageChannel: {
  prototype: { readonly port1: MessagePort; readonly port2: MessagePort };
  new (): { readonly port1: MessagePort; readonly port2: MessagePort };
};
