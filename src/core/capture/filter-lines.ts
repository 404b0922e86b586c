/**
 * The page's filter text as the filters it holds: one per line (several are ORed, as several
 * `-F` are), blank lines and the blanks around each dropped. The URL holds each as a `filter=`.
 */
export function filterLines(text: string): string[] {
  return text
    .split('\n')
    .map((t) => t.trim())
    .filter((t) => t !== '');
}
