// Layout golden test: encodes one record of every type with deterministic
// field values and compares the bytes with the committed golden file, so a
// layout change is always a deliberate, reviewed change. Also checks that the
// generated files are up to date. UPDATE_GOLDEN=1 rewrites the golden file.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LAYOUT_FINGERPRINT, RECORDS } from '../../src/layout/records.js';
import { decodeRecord, encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const goldenPath = `${root}test/layout/golden_records.txt`;

function sample(typeIndex: number): RecordObject {
  const info = RECORDS[typeIndex]!;
  const obj: RecordObject = {
    type: info.name,
    producer: 2,
    correlation: 0x01020304,
    account: 7,
    seq: 123456789012,
    ts: 1_750_000_000_123_456_789n,
  };
  info.fields.forEach((f, i) => {
    if (f.name.startsWith('reserved')) return;
    const k = info.type * 16 + i;
    switch (f.type) {
      case 'u8': obj[f.name] = k & 0xff; break;
      case 'u16': obj[f.name] = (k * 31) & 0xffff; break;
      case 'u32': obj[f.name] = k * 100003; break;
      case 'u64': obj[f.name] = f.js === 'safe' ? k * 1_000_003 + 2 ** 40 : (BigInt(k) << 40n) + 12345n; break;
      case 'utf8': obj[f.name] = `${f.name}-${k}-ü`; break;
      case 'bytes': obj[f.name] = Buffer.alloc(f.size, k & 0xff).toString('hex'); break;
    }
  });
  return obj;
}

function render(): string {
  const lines = [`fingerprint ${LAYOUT_FINGERPRINT.toString(16).padStart(8, '0')}`];
  RECORDS.forEach((info, i) => {
    const { mem, size } = encodeToMem(sample(i));
    lines.push(`${info.name} ${Buffer.from(mem.u8.subarray(0, size)).toString('hex')}`);
  });
  return lines.join('\n') + '\n';
}

test('layout: every record encodes to the committed golden bytes', () => {
  const now = render();
  if (process.env.UPDATE_GOLDEN === '1' || !existsSync(goldenPath)) writeFileSync(goldenPath, now);
  assert.equal(now, readFileSync(goldenPath, 'utf8'), 'record bytes changed: review the layout change, then run with UPDATE_GOLDEN=1');
});

test('layout: decoding an encoded record gives back every field', () => {
  RECORDS.forEach((info, i) => {
    const obj = sample(i);
    const { mem } = encodeToMem(obj);
    const back = decodeRecord(mem, 0);
    for (const [k, v] of Object.entries(obj)) assert.deepEqual(back[k], v, `${info.name}.${k}`);
    assert.equal(mem.u32[0], info.size, `${info.name} length word`);
  });
});

test('layout: the generated accessors and LAYOUT.md are up to date', () => {
  const out = execFileSync(process.execPath, [`${root}tools/gen_layout.mjs`, '--check'], { encoding: 'utf8' });
  assert.match(out, /up to date/);
});
