import { useRef } from 'react';

/** A button that opens the browser's file picker (several files), and the hidden `<input type=file>` behind it (`testId`). */
export function FilePicker({
  label,
  testId,
  buttonTestId,
  title,
  onFiles,
}: {
  label: string;
  testId: string;
  buttonTestId?: string;
  title?: string;
  onFiles(files: { name: string; blob: Blob }[]): void;
}) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <>
      <button type="button" onClick={() => input.current?.click()} data-testid={buttonTestId} title={title}>
        {label}
      </button>
      <input
        ref={input}
        data-testid={testId}
        type="file"
        multiple
        hidden
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          e.currentTarget.value = '';
          if (files.length) onFiles(files.map((f) => ({ name: f.webkitRelativePath || f.name, blob: f })));
        }}
      />
    </>
  );
}
