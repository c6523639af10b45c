// ui: small pieces both pages use. Browser main thread.

/** A table head of column headers (scope=col, for screen readers). */
export function Head(props: { cols: string[] }) {
  return (
    <thead>
      <tr>
        {props.cols.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** The value of the input or select an event came from. */
export function value(e: Event): string {
  return (e.target as HTMLInputElement | HTMLSelectElement).value;
}

/** Whether the checkbox an event came from is ticked. */
export function checked(e: Event): boolean {
  return (e.target as HTMLInputElement).checked;
}
