/**
 * A byte count as the page prints it: decimal units (kB = 1,000 B, MB, GB), one or two decimals.
 * The page's tables and the what-if's words (in the page and in `cli whatif`) print sizes with it,
 * so a figure in a sentence reads the same as in the table beside it.
 */
export const fmtBytes = (n: number): string =>
  n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(2)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${Math.round(n)} B`;
