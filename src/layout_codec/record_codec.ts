// record_codec: generic, table-driven encoding and decoding of any record as a
// plain object, for tests, tools, the journal dump and the reference model.
// Never on a hot path: hot paths use the generated accessors directly. Any
// thread. It lives beside src/layout, not in it (src/layout holds generated
// files only) and not in src/lib (which imports nothing of the layout), so
// the folder graph stays lib <- layout <- layout_codec.
//
// Object form: { type: 'PlaceOrder', seq, ts, producer, correlation, account,
// ...fields }. u64 `safe` fields are numbers, `hilo` fields (and ts) are
// bigints, utf8 fields strings, bytes fields hex strings, enums numbers.

import { HEADER_FIELDS, HEADER_SIZE, RECORDS, type FieldInfo, type RecordInfo } from '../layout/records.js';
import { assert } from '../lib/assert.js';
import { memOf, type Mem } from '../lib/mem.js';
import { readUtf8, writeUtf8 } from '../lib/utf8.js';

export type RecordObject = { type: string } & Record<string, unknown>;

const byName = new Map<string, RecordInfo>(RECORDS.map((r) => [r.name, r]));
const byType = new Map<number, RecordInfo>(RECORDS.map((r) => [r.type, r]));

export function recordInfo(nameOrType: string | number): RecordInfo {
  const info = typeof nameOrType === 'string' ? byName.get(nameOrType) : byType.get(nameOrType);
  if (!info) throw new Error(`record_codec: unknown record ${String(nameOrType)}`);
  return info;
}

function readField(m: Mem, o: number, f: FieldInfo): unknown {
  const at = o + f.offset;
  switch (f.type) {
    case 'u8': return m.u8[at];
    case 'u16': return m.u16[at >>> 1];
    case 'u32': return m.u32[at >>> 2];
    case 'u64': {
      const lo = m.u32[at >>> 2]!;
      const hi = m.u32[(at >>> 2) + 1]!;
      if (f.js === 'safe') {
        assert(hi < 0x200000, `record_codec: ${f.name} exceeds 2^53`);
        return hi * 4294967296 + lo;
      }
      return (BigInt(hi) << 32n) | BigInt(lo);
    }
    case 'utf8': return readUtf8(m, at, f.size);
    case 'bytes': return Buffer.from(m.u8.subarray(at, at + f.size)).toString('hex');
  }
  throw new Error(`record_codec: field type ${f.type}`);
}

function writeField(m: Mem, o: number, f: FieldInfo, v: unknown): void {
  const at = o + f.offset;
  switch (f.type) {
    case 'u8': m.u8[at] = Number(v ?? 0); return;
    case 'u16': m.u16[at >>> 1] = Number(v ?? 0); return;
    case 'u32': m.u32[at >>> 2] = Number(v ?? 0); return;
    case 'u64': {
      const b = BigInt((v as number | bigint | string | undefined) ?? 0);
      assert(b >= 0n && b < 1n << 64n, `record_codec: ${f.name} out of u64 range`);
      if (f.js === 'safe') assert(b < 1n << 53n, `record_codec: ${f.name} exceeds 2^53`);
      m.u32[at >>> 2] = Number(b & 0xffffffffn);
      m.u32[(at >>> 2) + 1] = Number(b >> 32n);
      return;
    }
    case 'utf8': writeUtf8(m, at, f.size, String(v ?? '')); return;
    case 'bytes': {
      m.u8.fill(0, at, at + f.size);
      if (v instanceof Uint8Array) m.u8.set(v.subarray(0, f.size), at);
      else if (typeof v === 'string') m.u8.set(Buffer.from(v, 'hex').subarray(0, f.size), at);
      return;
    }
  }
  throw new Error(`record_codec: field type ${f.type}`);
}

/** Decodes the record at o (header and fields). */
export function decodeRecord(m: Mem, o: number): RecordObject {
  const type = m.u16[(o + 4) >>> 1]!;
  const info = recordInfo(type);
  const out: RecordObject = { type: info.name };
  for (const f of HEADER_FIELDS) if (f.name !== 'len' && f.name !== 'type') out[f.name] = readField(m, o, f);
  for (const f of info.fields) if (!f.name.startsWith('reserved')) out[f.name] = readField(m, o, f);
  return out;
}

/** Encodes obj at o (zeroing the record first); returns the record size. */
export function encodeRecord(m: Mem, o: number, obj: RecordObject): number {
  const info = recordInfo(obj.type);
  m.u8.fill(0, o, o + info.size);
  m.u32[o >>> 2] = info.size;
  m.u16[(o + 4) >>> 1] = info.type;
  for (const f of HEADER_FIELDS) if (f.name !== 'len' && f.name !== 'type' && obj[f.name] !== undefined) writeField(m, o, f, obj[f.name]);
  for (const f of info.fields) {
    if (f.name.startsWith('reserved')) continue;
    if (!(f.name in obj)) continue;
    writeField(m, o, f, obj[f.name]);
  }
  for (const k of Object.keys(obj)) {
    if (k === 'type') continue;
    if (!HEADER_FIELDS.some((f) => f.name === k) && !info.fields.some((f) => f.name === k)) {
      throw new Error(`record_codec: ${info.name} has no field ${k}`);
    }
  }
  return info.size;
}

/** Encodes one record into a fresh 8-aligned buffer (tests and tools). */
export function encodeToMem(obj: RecordObject): { mem: Mem; size: number } {
  const info = recordInfo(obj.type);
  const mem = memOf(new ArrayBuffer(info.size));
  encodeRecord(mem, 0, obj);
  return { mem, size: info.size };
}

export { HEADER_SIZE };
