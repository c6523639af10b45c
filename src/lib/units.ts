// units: the exchange's integer units as people read them: cents as dollars,
// oracle units (x 1e8) as decimals. Pure string functions over the wire's
// decimal strings (BigInt, so every u64 is exact); the `dx` CLI and the web
// pages both show numbers this way. Any thread, any process, the browser.

/** Cents (a u64 decimal string) as dollars: "123456" -> "$1,234.56". */
export function dollars(cents: string | number): string {
  const v = BigInt(cents);
  const neg = v < 0n;
  const a = neg ? -v : v;
  const whole = (a / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}$${whole}.${(a % 100n).toString().padStart(2, '0')}`;
}

/** Oracle units (x 1e8) as a decimal: "6500012000000" -> "65,000.12". Trailing zeros beyond 2 decimals dropped. */
export function oracle(units: string | number): string {
  const v = BigInt(units);
  const whole = (v / 100_000_000n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  let frac = (v % 100_000_000n).toString().padStart(8, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${whole}.${frac}`;
}
