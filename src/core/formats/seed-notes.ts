/**
 * What the seeds say of a file format the explorer reads or writes, for the places that show one
 * (the Files pane, `generate`): which seed describes it, or that none does.
 *
 * `stack_map_bin`: the v7 document describes version 1 ("Magic: ``0x46534D42`` ('FSMB'), Version:
 * 1."). The cookie ABI mail proposes version 2 ("stack_map_bin reports the generation of the dump
 * in the header word that is currently reserved (ABI version 1 -> 2)"), and the v8 cover letter
 * leaves the binary export out of v8 as posted: "the binary export, its parser and the capacity
 * boot parameter will follow as a separate series".
 */

/** The follow-up series, in the v8 cover letter's words. */
export const V8_FOLLOW_UP = '"the binary export, its parser and the capacity boot parameter will follow as a separate series"';

/** What a stack_map_bin of this header version is, by the seeds. */
export function binVersionNote(version: string): string {
  if (version === '1') return "stack_map_bin version 1: the v7 document's format (\"Magic: 0x46534D42 ('FSMB'), Version: 1\")";
  if (version === '2')
    return (
      "stack_map_bin version 2: the cookie ABI mail's proposal (the generation in the header's reserved word), for the follow-up series " +
      `the v8 cover letter announces (${V8_FOLLOW_UP}); v8 as posted writes no stack_map_bin`
    );
  if (version === 'unknown') return 'stack_map_bin with no header read (no magic): no version to name';
  return `stack_map_bin version ${version}: no seed describes it (read as version 2)`;
}

/**
 * The embedded sample (public/samples/, scripts/make-sample.ts): a simulated v8 capture whose
 * binary dumps are stack_map_bin version 2, which v8 as posted does not have.
 */
export const SAMPLE_NOTE =
  "a simulated v8 capture, not one recorded on a kernel; its stack_map_bin dumps are version 2, the cookie ABI mail's proposal for the follow-up series " +
  `the v8 cover letter announces (${V8_FOLLOW_UP}): v8 as posted exports only the text stack_map`;
