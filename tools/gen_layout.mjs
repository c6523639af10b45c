#!/usr/bin/env node
// gen_layout: reads native-layout/*.json (the one description of every binary
// record, enum and reject code, and of the binary order-entry frames of the
// WebSocket lane) and writes the TypeScript accessors (src/layout/records.ts)
// and the reference (native-layout/LAYOUT.md), whose worked example of a
// binary frame is encoded here from the same offsets.
//
//   node tools/gen_layout.mjs           regenerate both files
//   node tools/gen_layout.mjs --check   exit 1 when either committed file is stale
//
// Rules it enforces, so that every byte is named: fields are naturally aligned,
// records are a multiple of 8 bytes, type ids and names are unique, every
// record, field and enum value has a doc. Output carries no timestamp.
// Plain JavaScript on purpose: it must run before `tsc`.

import { readFileSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dir = join(root, 'native-layout');
const read = (f) => JSON.parse(readFileSync(join(dir, f), 'utf8'));

const header = read('header.json');
const enums = read('enums.json').enums;
const commands = read('commands.json');
const events = read('events.json');
const codes = read('codes.json');
const wire = read('wire.json');

const SIZES = { u8: 1, u16: 2, u32: 4, u64: 8 };
const errors = [];
const fail = (msg) => errors.push(msg);

// The fingerprint names the binary layout and the codes, not their prose:
// `doc` texts are left out, so rewording a description never makes a build
// refuse the journals, snapshots and binary clients of the one before.
function canonical(v) {
  if (Array.isArray(v)) return '[' + v.map(canonical).join(',') + ']';
  if (v && typeof v === 'object') {
    const keys = Object.keys(v).filter((k) => k !== 'doc').sort();
    return '{' + keys.map((k) => JSON.stringify(k) + ':' + canonical(v[k])).join(',') + '}';
  }
  return JSON.stringify(v);
}

function fnv1a32(s) {
  let h = 0x811c9dc5;
  const bytes = Buffer.from(s, 'utf8');
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

const fingerprint = fnv1a32(canonical({ header, enums, commands, events, codes, wire }));
const enumByName = new Map(enums.map((e) => [e.name, e]));

// ---- validation and offset assignment ----------------------------------

function layoutFields(owner, fields, start) {
  let off = start;
  const out = [];
  for (const f of fields) {
    if (!f.doc) fail(`${owner}.${f.name}: missing doc`);
    let size;
    let align;
    if (f.type === 'utf8' || f.type === 'bytes') {
      size = f.size;
      align = 8;
      if (!Number.isInteger(size) || size <= 0 || size % 8 !== 0)
        fail(`${owner}.${f.name}: ${f.type} size must be a positive multiple of 8`);
    } else if (SIZES[f.type]) {
      size = SIZES[f.type];
      align = size;
    } else {
      fail(`${owner}.${f.name}: unknown type ${f.type}`);
      continue;
    }
    if (f.type === 'u64' && f.js !== 'safe' && f.js !== 'hilo') fail(`${owner}.${f.name}: u64 needs js "safe" or "hilo"`);
    if (f.enum && !enumByName.has(f.enum)) fail(`${owner}.${f.name}: unknown enum ${f.enum}`);
    if (off % align !== 0) fail(`${owner}.${f.name}: offset ${off} is not ${align}-aligned (add a named reserved field)`);
    out.push({ ...f, offset: off, size });
    off += size;
  }
  return { fields: out, size: off };
}

const hdr = layoutFields('Header', header.fields, 0);
if (hdr.size !== header.size) fail(`Header: fields add up to ${hdr.size}, declared ${header.size}`);

const records = [];
const seenTypes = new Map();
const seenNames = new Set();
// Entries: headerless structs repeated after a wire record's fixed part (its tail).
const entries = [];
for (const e of wire.entries) {
  if (!e.doc) fail(`${e.name}: missing doc`);
  if (seenNames.has(e.name)) fail(`${e.name}: duplicate name`);
  seenNames.add(e.name);
  const l = layoutFields(e.name, e.fields, 0);
  if (l.size % 8 !== 0) fail(`${e.name}: size ${l.size} is not a multiple of 8 (add a named reserved field)`);
  entries.push({ name: e.name, doc: e.doc, size: l.size, fields: l.fields });
}
const entryByName = new Map(entries.map((e) => [e.name, e]));
for (const [kind, group, lo, hi] of [['command', commands, 1, 63], ['event', events, 64, 127], ['wire', wire, 128, 191]]) {
  for (const r of group.records) {
    if (!r.doc) fail(`${r.name}: missing doc`);
    if (r.type < lo || r.type > hi) fail(`${r.name}: ${kind} type ${r.type} outside ${lo}..${hi}`);
    if (seenTypes.has(r.type)) fail(`${r.name}: type ${r.type} already used by ${seenTypes.get(r.type)}`);
    if (seenNames.has(r.name)) fail(`${r.name}: duplicate name`);
    if (r.tail !== undefined && (kind !== 'wire' || !entryByName.has(r.tail)))
      fail(`${r.name}: tail ${r.tail} is not an entry of wire.json`);
    seenTypes.set(r.type, r.name);
    seenNames.add(r.name);
    const l = layoutFields(r.name, r.fields, header.size);
    if (l.size % 8 !== 0) fail(`${r.name}: size ${l.size} is not a multiple of 8 (add a named reserved field)`);
    records.push({ kind, name: r.name, type: r.type, doc: r.doc, size: l.size, fields: l.fields, tail: r.tail });
  }
}
for (const e of enums) {
  if (!e.doc) fail(`enum ${e.name}: missing doc`);
  const vals = new Set();
  for (const v of e.values) {
    if (!v.doc) fail(`enum ${e.name}.${v.name}: missing doc`);
    if (vals.has(v.value)) fail(`enum ${e.name}: value ${v.value} used twice`);
    vals.add(v.value);
  }
}
const gatewayCodes = new Set(codes.codes.filter((c) => c.origin === 'gateway').map((c) => c.code));
for (const e of enums.filter((x) => x.codes)) {
  // An enum of error codes for binary answers: each name (but none = 0) is a gateway code of codes.json.
  for (const v of e.values)
    if (v.value !== 0 && !gatewayCodes.has(v.name)) fail(`enum ${e.name}.${v.name}: not a gateway code of codes.json`);
}
const nums = new Set();
for (const c of codes.codes) {
  if (!c.doc) fail(`code ${c.code}: missing doc`);
  if (c.origin !== 'core' && c.origin !== 'gateway') fail(`code ${c.code}: origin is gateway or core`);
  if (c.origin === 'core' && !Number.isInteger(c.num)) fail(`code ${c.code}: core codes need a num`);
  if (c.origin === 'gateway' && c.num !== null) fail(`code ${c.code}: gateway codes have num null`);
  if (c.num !== null) {
    if (nums.has(c.num)) fail(`code ${c.code}: num ${c.num} used twice`);
    nums.add(c.num);
  }
}
if (errors.length) {
  console.error('native-layout is invalid:\n  ' + errors.join('\n  '));
  process.exit(2);
}

// ---- field copies ---------------------------------------------------------
//
// Records that repeat another record's fields (an event echoing its command):
// each pair gets a generated `copy_from_<Source>` on the destination, which
// copies every field the two share by name and type (reserved fields aside)
// as whole u32 words wherever the fields lie contiguous at the same
// displacement in both, instead of one accessor call per field. The list is
// code, not layout: it does not enter the fingerprint.
const COPIES = [
  ['PlaceOrder', 'OrderAccepted'],
  ['PlaceOrder', 'OrderRejected'],
  ['CreateMarket', 'MarketCreated'],
  ['CreateSeries', 'MarketCreated'],
  ['CreateKey', 'KeyCreated'],
  ['Deposit', 'Deposited'],
  ['RequestWithdrawal', 'WithdrawalRequested'],
];
const recordByName = new Map(records.map((r) => [r.name, r]));

/** Runs of shared fields, contiguous in both records: [{ src, dst, len, names }], in destination order. */
function sharedRuns(from, to) {
  const byName = new Map(from.fields.map((f) => [f.name, f]));
  const shared = to.fields
    .filter((f) => !f.name.startsWith('reserved'))
    .map((f) => [byName.get(f.name), f])
    .filter(([a, b]) => a !== undefined && a.type === b.type && a.size === b.size && (a.js ?? '') === (b.js ?? ''));
  const runs = [];
  for (const [a, b] of shared) {
    const last = runs.at(-1);
    if (last && last.src + last.len === a.offset && last.dst + last.len === b.offset) {
      last.len += a.size;
      last.names.push(a.name);
    } else {
      runs.push({ src: a.offset, dst: b.offset, len: a.size, names: [a.name] });
    }
  }
  return runs;
}

/** The statements copying one run: u32 words when both ends allow, else u16, else bytes. */
function copyRun(run) {
  const w =
    run.src % 4 === 0 && run.dst % 4 === 0 && run.len % 4 === 0 ? 4 : run.src % 2 === 0 && run.dst % 2 === 0 && run.len % 2 === 0 ? 2 : 1;
  const view = w === 4 ? 'u32' : w === 2 ? 'u16' : 'u8';
  const shift = w === 4 ? ' >>> 2' : w === 2 ? ' >>> 1' : '';
  const out = [];
  const n = run.len / w;
  if (n > 8) {
    // Long runs (text, secrets): a loop over the words.
    const d = w === 1 ? `o + ${run.dst}` : `((o + ${run.dst})${shift})`;
    const sIdx = w === 1 ? `so + ${run.src}` : `((so + ${run.src})${shift})`;
    out.push(`for (let k = 0; k < ${n}; k++) m.${view}[${d} + k] = src.${view}[${sIdx} + k]!;`);
    return out;
  }
  for (let k = 0; k < run.len; k += w) {
    const d = w === 1 ? `o + ${run.dst + k}` : `(o + ${run.dst + k})${shift}`;
    const sIdx = w === 1 ? `so + ${run.src + k}` : `(so + ${run.src + k})${shift}`;
    out.push(`m.${view}[${d}] = src.${view}[${sIdx}]!;`);
  }
  return out;
}

const copiesTo = new Map();
for (const [fromName, toName] of COPIES) {
  const from = recordByName.get(fromName);
  const to = recordByName.get(toName);
  if (!from || !to) {
    console.error(`gen_layout: COPIES names an unknown record (${fromName} -> ${toName})`);
    process.exit(2);
  }
  const runs = sharedRuns(from, to);
  if (runs.length === 0) {
    console.error(`gen_layout: ${fromName} and ${toName} share no field`);
    process.exit(2);
  }
  const names = runs.flatMap((r) => r.names);
  const lines = [
    `  /** Copies the fields shared with ${fromName} (${names.join(', ')}) from the ${fromName} at \`so\` in \`src\`. */`,
    `  copy_from_${fromName}(src: Mem, so: number, m: Mem, o: number): void {`,
    ...runs.flatMap(copyRun).map((l) => `    ${l}`),
    '  },',
  ];
  copiesTo.set(toName, [...(copiesTo.get(toName) ?? []), ...lines]);
}

// ---- TypeScript ---------------------------------------------------------

const U32_IDX = (off) => `(o + ${off}) >>> 2`;

function accessors(f) {
  const n = f.name;
  const lines = [];
  const doc = `  /** ${f.doc} */`;
  const docWith = (extra) => `  /** ${f.doc} (${extra}) */`;
  switch (f.type) {
    case 'u8':
      lines.push(doc, `  ${n}(m: Mem, o: number): number { return m.u8[o + ${f.offset}]!; },`);
      lines.push(`  set_${n}(m: Mem, o: number, v: number): void { m.u8[o + ${f.offset}] = v; },`);
      break;
    case 'u16':
      lines.push(doc, `  ${n}(m: Mem, o: number): number { return m.u16[(o + ${f.offset}) >>> 1]!; },`);
      lines.push(`  set_${n}(m: Mem, o: number, v: number): void { m.u16[(o + ${f.offset}) >>> 1] = v; },`);
      break;
    case 'u32':
      lines.push(doc, `  ${n}(m: Mem, o: number): number { return m.u32[${U32_IDX(f.offset)}]!; },`);
      lines.push(`  set_${n}(m: Mem, o: number, v: number): void { m.u32[${U32_IDX(f.offset)}] = v; },`);
      break;
    case 'u64':
      if (f.js === 'safe') {
        lines.push(docWith('a safe integer < 2^53'));
        lines.push(`  ${n}(m: Mem, o: number): number { const i = ${U32_IDX(f.offset)}; return m.u32[i]! + m.u32[i + 1]! * 4294967296; },`);
        lines.push(
          `  set_${n}(m: Mem, o: number, v: number): void { const i = ${U32_IDX(f.offset)}; m.u32[i] = v >>> 0; m.u32[i + 1] = (v * ` +
            `2.3283064365386963e-10) >>> 0; },`,
        );
      } else {
        lines.push(docWith('high 32 bits'));
        lines.push(`  ${n}_hi(m: Mem, o: number): number { return m.u32[${U32_IDX(f.offset + 4)}]!; },`);
        lines.push(`  /** ${f.doc} (low 32 bits) */`);
        lines.push(`  ${n}_lo(m: Mem, o: number): number { return m.u32[${U32_IDX(f.offset)}]!; },`);
        lines.push(
          `  set_${n}(m: Mem, o: number, hi: number, lo: number): void { const i = ${U32_IDX(f.offset)}; m.u32[i] = lo; m.u32[i + 1] = ` +
            `hi; },`,
        );
      }
      break;
    case 'utf8':
      lines.push(docWith(`UTF-8, NUL-padded, at most ${f.size} bytes`));
      lines.push(`  ${n}(m: Mem, o: number): string { return readUtf8(m, o + ${f.offset}, ${f.size}); },`);
      lines.push(`  set_${n}(m: Mem, o: number, v: string): void { writeUtf8(m, o + ${f.offset}, ${f.size}, v); },`);
      break;
    case 'bytes':
      lines.push(docWith(`${f.size} bytes, a view into the record`));
      lines.push(`  ${n}(m: Mem, o: number): Uint8Array { return m.u8.subarray(o + ${f.offset}, o + ${f.offset + f.size}); },`);
      lines.push(`  set_${n}(m: Mem, o: number, v: Uint8Array): void { m.u8.set(v.subarray(0, ${f.size}), o + ${f.offset}); },`);
      break;
  }
  return lines;
}

/**
 * `write`: every field of the header, or of a record's body, in one call,
 * as whole u32 words (u8 and u16 fields shifted into their word, reserved
 * fields zero). The engine writes a header per event and a CommandCompleted
 * per command; a setter per field, each with its own view and index,
 * measured 3-8% slower on the engine_match stream (tools/engine_ab). hilo
 * fields take two arguments (hi, lo). A u8 or u16 argument must fit its
 * field: unlike the setters (whose typed-array store truncates it) a larger
 * value would spill into the next field of its word. Generated for the
 * header and for the records in WRITES (code, not layout: not in the
 * fingerprint).
 */
const WRITES = ['CommandCompleted', 'OrderRested', 'Filled', 'OrderCanceled'];

function wordWrite(owner, fields) {
  const reserved = (f) => f.name.startsWith('reserved');
  const params = fields
    .filter((f) => !reserved(f))
    .flatMap((f) => (f.type === 'u64' && f.js === 'hilo' ? [`${f.name}_hi`, `${f.name}_lo`] : [f.name]));
  const words = new Map();
  const put = (w, expr) => words.set(w, [...(words.get(w) ?? []), ...(expr === null ? [] : [expr])]);
  for (const f of fields) {
    const w = f.offset >>> 2;
    const shift = (f.offset % 4) * 8;
    // Not masked (masks measured 5% slower, tools/engine_ab): a u8 / u16 argument must fit its field.
    if (f.type === 'u8' || f.type === 'u16') put(w, reserved(f) ? null : shift === 0 ? f.name : `${f.name} << ${shift}`);
    else if (f.type === 'u32') put(w, reserved(f) ? null : f.name);
    else if (f.type === 'u64' && reserved(f)) {
      put(w, null);
      put(w + 1, null);
    } else if (f.type === 'u64' && f.js === 'safe') {
      put(w, `${f.name} >>> 0`);
      put(w + 1, `(${f.name} * 2.3283064365386963e-10) >>> 0`);
    } else if (f.type === 'u64') {
      put(w, `${f.name}_lo`);
      put(w + 1, `${f.name}_hi`);
    } else fail(`${owner}.${f.name}: ${f.type} has no place in a word write`);
  }
  const word = (parts) => (parts.length === 0 ? '0' : parts.length === 1 ? parts[0] : `(${parts.join(' | ')}) >>> 0`);
  const body = [...words].map(([w, parts]) => `    u[i${w === 0 ? '' : ` + ${w}`}] = ${word(parts)};`);
  const what = owner === 'Header' ? 'every header field' : 'every field after the header';
  return [
    `  /** Writes ${what} (${params.join(', ')}) as whole u32 words${owner === 'Header' ? '' : ', reserved ones zero'}; ` +
      'u8 and u16 arguments must fit their fields. */',
    `  write(m: Mem, o: number, ${params.map((p) => `${p}: number`).join(', ')}): void {`,
    '    const u = m.u32;',
    '    const i = o >>> 2;',
    ...body,
    '  },',
  ];
}

function pascalToSnakeUpper(s) {
  return s.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

const ts = [];
ts.push('// GENERATED by tools/gen_layout.mjs from native-layout/*.json. Do not edit by hand:');
ts.push('// change the JSON and run `npm run layout`. `npm test` fails when this file is stale.');
ts.push('//');
ts.push('// Accessors read and write records in place through a Mem (typed-array views');
ts.push('// over a ring, journal or scratch buffer); `o` is the byte offset of the');
ts.push('// record. Field names are the wire names. u64 fields are either `safe`');
ts.push('// (a number < 2^53) or `hilo` (two u32 halves, for timestamps and client ids).');
ts.push('');
ts.push("import type { Mem } from '../lib/mem.js';");
ts.push("import { readUtf8, writeUtf8 } from '../lib/utf8.js';");
ts.push('');
ts.push('/** FNV-1a 32 of the canonical JSON of native-layout/*.json; stamped into ring and journal headers. */');
ts.push(`export const LAYOUT_FINGERPRINT = 0x${fingerprint.toString(16).padStart(8, '0')};`);
ts.push(`export const HEADER_SIZE = ${header.size};`);
ts.push('');
ts.push('// ---- enums ----');
for (const e of enums) {
  ts.push(`/** ${e.doc} */`);
  ts.push(`export const ${e.name} = {`);
  for (const v of e.values) ts.push(`  /** ${v.doc} */`, `  ${v.name}: ${v.value},`);
  ts.push('} as const;');
  if (!e.bits) {
    const max = Math.max(...e.values.map((v) => v.value));
    const names = [];
    for (let i = 0; i <= max; i++) names.push(e.values.find((v) => v.value === i)?.name ?? '');
    // `as const`: the JSON wire schemas (src/wire) derive literal unions from these names.
    ts.push(`export const ${pascalToSnakeUpper(e.name)}_NAMES = ${JSON.stringify(names)} as const;`);
  } else {
    ts.push(`export const ${pascalToSnakeUpper(e.name)}_BITS = ${JSON.stringify(e.values.map((v) => [v.name, v.value]))} as const;`);
  }
  ts.push('');
}
ts.push('// ---- reject codes ----');
ts.push('export interface CodeInfo {');
ts.push(
  "  readonly code: string; readonly num: number | null; readonly http: number; readonly origin: 'gateway' | 'core'; readonly doc: string;",
);
ts.push('}');
ts.push('export const CODES: readonly CodeInfo[] = [');
for (const c of codes.codes) ts.push(`  ${JSON.stringify({ code: c.code, num: c.num, http: c.http, origin: c.origin, doc: c.doc })},`);
ts.push('];');
ts.push('/** Core reject nums by code name. */');
ts.push('export const Reject = {');
for (const c of codes.codes.filter((c) => c.num !== null)) ts.push(`  ${c.code}: ${c.num},`);
ts.push('} as const;');
ts.push('');
ts.push('// ---- header ----');
ts.push(`/** ${header.doc} */`);
ts.push('export const Header = {');
for (const f of hdr.fields) ts.push(...accessors(f));
ts.push(...wordWrite('Header', hdr.fields));
ts.push('};');
ts.push('');
ts.push('// ---- record types ----');
for (const r of records) ts.push(`export const T_${pascalToSnakeUpper(r.name)} = ${r.type};`);
ts.push('');
for (const r of records) {
  ts.push(`/** ${r.kind === 'command' ? 'Command' : 'Event'} ${r.type}, ${r.size} bytes. ${r.doc} */`);
  ts.push(`export const ${r.name} = {`);
  ts.push(`  TYPE: ${r.type},`);
  ts.push(`  SIZE: ${r.size},`);
  const reserved = r.fields.filter((f) => f.name.startsWith('reserved'));
  ts.push('  /** Zeroes the reserved fields (writers set every other field). */');
  ts.push(`  clear_reserved(${reserved.length ? 'm: Mem, o: number' : '_m: Mem, _o: number'}): void {${reserved.map((f) => {
    const idx =
      f.type === 'u8' ? `m.u8[o + ${f.offset}]` : f.type === 'u16' ? `m.u16[(o + ${f.offset}) >>> 1]` : `m.u32[(o + ${f.offset}) >>> 2]`;
    return ` ${idx} = 0;`;
  }).join('')} },`);
  for (const f of r.fields) ts.push(...accessors(f));
  ts.push(...(copiesTo.get(r.name) ?? []));
  if (WRITES.includes(r.name)) ts.push(...wordWrite(r.name, r.fields));
  ts.push('};');
  ts.push('');
}
ts.push('// ---- entries (headerless structs after a wire record\'s fixed part; `o` is the entry\'s offset) ----');
for (const e of entries) {
  ts.push(`/** Entry, ${e.size} bytes. ${e.doc} */`);
  ts.push(`export const ${e.name} = {`);
  ts.push(`  SIZE: ${e.size},`);
  for (const f of e.fields) ts.push(...accessors(f));
  ts.push('};');
  ts.push('');
}
ts.push('// ---- tables for tools, tests and generic decoding (not for hot paths) ----');
ts.push(
  'export interface FieldInfo { readonly name: string; readonly type: string; readonly offset: number; readonly size: number; readonly ' +
    'js?: string; readonly enum?: string; }',
);
ts.push(
  "export interface RecordInfo { readonly kind: 'command' | 'event' | 'wire'; readonly name: string; readonly type: number; readonly " +
    "size: number; readonly fields: readonly FieldInfo[]; readonly tail?: string; }",
);
const fi = (f) => {
  const o = { name: f.name, type: f.type, offset: f.offset, size: f.size };
  if (f.js) o.js = f.js;
  if (f.enum) o.enum = f.enum;
  return JSON.stringify(o);
};
ts.push(`export const HEADER_FIELDS: readonly FieldInfo[] = [${hdr.fields.map(fi).join(', ')}];`);
ts.push('export const RECORDS: readonly RecordInfo[] = [');
for (const r of records) {
  ts.push(`  { kind: '${r.kind}', name: '${r.name}', type: ${r.type}, size: ${r.size},${r.tail ? ` tail: '${r.tail}',` : ''} fields: [`);
  for (const f of r.fields) ts.push(`    ${fi(f)},`);
  ts.push('  ] },');
}
ts.push('];');
ts.push('');
const tsOut = ts.join('\n');

// ---- LAYOUT.md ----------------------------------------------------------

const md = [];
const esc = (s) => String(s).replace(/\|/g, '\\|');
const ftype = (f) =>
  (f.type === 'u64' ? `u64 (${f.js})` : f.type === 'utf8' || f.type === 'bytes' ? `${f.type}[${f.size}]` : f.type) +
  (f.enum ? ` enum ${f.enum}` : '');
md.push('# Binary layout reference');
md.push('');
md.push('GENERATED by `tools/gen_layout.mjs` from `native-layout/*.json`; do not edit by hand.');
md.push('All records are little-endian, start 8-byte aligned, and are a multiple of 8 bytes long.');
md.push(`Layout fingerprint: \`0x${fingerprint.toString(16).padStart(8, '0')}\` (stamped into ring and journal headers).`);
md.push('');
md.push('## Header');
md.push('');
md.push(header.doc);
md.push('');
md.push('| offset | field | type | doc |', '|---|---|---|---|');
for (const f of hdr.fields) md.push(`| ${f.offset} | \`${f.name}\` | ${ftype(f)} | ${esc(f.doc)} |`);
md.push('');
for (const [title, kind, group] of [['Commands', 'command', commands], ['Events', 'event', events]]) {
  md.push(`## ${title}`);
  md.push('');
  md.push(group.doc);
  md.push('');
  md.push('| type | record | bytes |', '|---|---|---|');
  for (const r of records.filter((r) => r.kind === kind)) md.push(`| ${r.type} | [${r.name}](#${r.name.toLowerCase()}) | ${r.size} |`);
  md.push('');
  for (const r of records.filter((r) => r.kind === kind)) {
    md.push(`### ${r.name}`);
    md.push('');
    md.push(`Type ${r.type}, ${r.size} bytes. ${r.doc}`);
    md.push('');
    if (r.fields.length === 0) {
      md.push('Header only.');
    } else {
      md.push('| offset | field | type | doc |', '|---|---|---|---|');
      for (const f of r.fields) md.push(`| ${f.offset} | \`${f.name}\` | ${ftype(f)} | ${esc(f.doc)} |`);
    }
    md.push('');
  }
}
md.push('## Binary order entry on the WebSocket lane');
md.push('');
md.push(wire.doc);
md.push('');
for (const rule of wire.rules) md.push(`- ${rule}`);
md.push('');
md.push('| type | record | bytes |', '|---|---|---|');
for (const r of records.filter((x) => x.kind === 'wire'))
  md.push(`| ${r.type} | [${r.name}](#${r.name.toLowerCase()}) | ${r.size}${r.tail ? ` + ${entryByName.get(r.tail).size} x n` : ''} |`);
md.push('');
for (const r of records.filter((x) => x.kind === 'wire')) {
  md.push(`### ${r.name}`);
  md.push('');
  md.push(`Type ${r.type}, ${r.size} bytes${r.tail ? ` followed by n [${r.tail}](#${r.tail.toLowerCase()}) entries` : ''}. ${r.doc}`);
  md.push('');
  md.push('| offset | field | type | doc |', '|---|---|---|---|');
  for (const f of r.fields) md.push(`| ${f.offset} | \`${f.name}\` | ${ftype(f)} | ${esc(f.doc)} |`);
  md.push('');
}
for (const e of entries) {
  md.push(`### ${e.name}`);
  md.push('');
  md.push(`Entry, ${e.size} bytes (offsets from the entry's start). ${e.doc}`);
  md.push('');
  md.push('| offset | field | type | doc |', '|---|---|---|---|');
  for (const f of e.fields) md.push(`| ${f.offset} | \`${f.name}\` | ${ftype(f)} | ${esc(f.doc)} |`);
  md.push('');
}
md.push(...workedExample());
md.push('## Enums');
md.push('');
for (const e of enums) {
  md.push(`### ${e.name}`);
  md.push('');
  md.push(e.doc + (e.bits ? ' (bit flags)' : ''));
  md.push('');
  md.push('| value | name | doc |', '|---|---|---|');
  for (const v of e.values) md.push(`| ${v.value} | \`${v.name}\` | ${esc(v.doc)} |`);
  md.push('');
}
md.push('## Error codes');
md.push('');
md.push(codes.doc);
md.push('');
md.push('| code | num | HTTP | origin | doc |', '|---|---|---|---|---|');
for (const c of codes.codes) md.push(`| \`${c.code}\` | ${c.num ?? 'null'} | ${c.http} | ${c.origin} | ${esc(c.doc)} |`);
md.push('');
const mdOut = md.join('\n');

// ---- the worked example of LAYOUT.md ---------------------------------------
//
// Encoded here from the same offsets as the accessors (little-endian), so the
// bytes in the reference cannot drift from the layout; test/client decodes
// them with the client library.

function enumName(f, v) {
  const e = f.enum ? enumByName.get(f.enum) : undefined;
  const hit = e?.values.find((x) => x.value === v);
  return hit ? `${v} (${hit.name})` : String(v);
}

/** One record (header, fields, then tail entries) as bytes plus annotated rows. */
function encodeExample(name, head, fields, tail = []) {
  const r = records.find((x) => x.name === name);
  const entry = r.tail ? entryByName.get(r.tail) : undefined;
  const size = r.size + (entry ? entry.size * tail.length : 0);
  const buf = Buffer.alloc(size);
  const rows = [];
  const put = (f, base, v, label) => {
    const at = base + f.offset;
    switch (f.type) {
      case 'u8': buf.writeUInt8(v, at); break;
      case 'u16': buf.writeUInt16LE(v, at); break;
      case 'u32': buf.writeUInt32LE(v, at); break;
      case 'u64': buf.writeBigUInt64LE(BigInt(v), at); break;
      default: throw new Error(`worked example: ${f.type} field ${f.name}`);
    }
    rows.push({ at, size: f.size, label, value: enumName(f, v) });
  };
  for (const f of hdr.fields) put(f, 0, f.name === 'len' ? size : f.name === 'type' ? r.type : (head[f.name] ?? 0), `header.${f.name}`);
  for (const f of r.fields) put(f, 0, fields[f.name] ?? 0, f.name);
  tail.forEach((t, i) => {
    for (const f of entry.fields) put(f, r.size + i * entry.size, t[f.name] ?? 0, `${entry.name}[${i}].${f.name}`);
  });
  return { name, buf, rows };
}

function exampleFrame(title, recs) {
  const out = [];
  const all = Buffer.concat(recs.map((x) => x.buf));
  out.push(`${title} (${all.length} bytes):`, '', '```');
  for (let i = 0; i < all.length; i += 16) out.push(all.subarray(i, i + 16).toString('hex').replace(/(..)(?!$)/g, '$1 '));
  out.push('```', '');
  out.push('| frame offset | bytes | field | value |', '|---|---|---|---|');
  let base = 0;
  for (const x of recs) {
    for (const row of x.rows) {
      out.push(
        `| ${base + row.at} | \`${x.buf.subarray(row.at, row.at + row.size).toString('hex')}\` | ${x.name} ${row.label} | ${row.value} |`,
      );
    }
    base += x.buf.length;
  }
  out.push('');
  return out;
}

function workedExample() {
  const code = (c) => codes.codes.find((x) => x.code === c).num;
  const ts = 1767225600000000000n;
  const place = encodeExample('PlaceOrder', { correlation: 7, account: 42 }, {
    market_id: 1, qty: 10, tick: 40, side: 0, outcome: 0, tif: 0, stp: 0, has_client_order_id: 1, client_order_id: 1001,
  });
  const cancel = encodeExample('CancelOrder', { correlation: 8, account: 42 }, { order_id: 4700 });
  const placed = encodeExample('EntryResult', { correlation: 7, account: 42, seq: 4711, ts }, {
    status: 0, order_status: 1, command_type: 1, order_id: 4711, filled_qty: 4, resting_qty: 6, client_order_id: 1001, fill_count: 1,
  }, [{ qty: 4, tick_yes: 40, path: 0 }]);
  const refused = encodeExample('EntryResult', { correlation: 8, account: 42, seq: 4712, ts: ts + 1n }, {
    status: 1, command_type: 2, code: code('unknown_order'), order_id: 4700,
  });
  return [
    '### Worked example',
    '',
    'Account 42 buys 10 YES at 40 in market 1 (gtc, client_order_id 1001, correlation 7) and, in the same frame, cancels',
    'order 4700 (correlation 8). The placement is sequenced at seq 4711, fills 4 against a resting NO bid at 60 (a mint at',
    'YES 40) and rests 6; order 4700 was already gone, so the cancel is rejected `unknown_order` (num 260). Both answers',
    'happen to come in one frame here; they may also come in two, in either order.',
    '',
    ...exampleFrame('The client\'s frame', [place, cancel]),
    ...exampleFrame('The answer frame', [placed, refused]),
  ];
}

// ---- write or check -----------------------------------------------------

const outputs = [
  [join(root, 'src/layout/records.ts'), tsOut],
  [join(dir, 'LAYOUT.md'), mdOut],
];
if (process.argv.includes('--check')) {
  const stale = outputs.filter(([p, s]) => !existsSync(p) || readFileSync(p, 'utf8') !== s).map(([p]) => p);
  if (stale.length) {
    console.error(`layout: generated files are stale, run \`npm run layout\`:\n  ${stale.join('\n  ')}`);
    process.exit(1);
  }
  console.log(`layout: up to date (fingerprint 0x${fingerprint.toString(16).padStart(8, '0')}, ${records.length} records)`);
} else {
  for (const [p, s] of outputs) {
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, s);
  }
  console.log(
    `layout: wrote ${outputs.length} files (fingerprint 0x${fingerprint.toString(16).padStart(8, '0')}, ${records.length} records)`,
  );
}
