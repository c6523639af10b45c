// REST lane, unit: receive() keeps a request body whole in memory while it
// streams in. A body sent a byte per TCP segment (any client, before
// authentication: the credentials are checked once the body is complete)
// must cost about its size, not a Buffer object per segment: otherwise each
// connection holding an unfinished body under BODY_CAP_BYTES holds megabytes
// of the gateway thread's heap. Test process, main thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { BODY_CAP_BYTES, receive, type InFlight } from '../../src/gateway/http.js';
import type { HttpRequest, HttpResponse } from '../../src/gateway/uws.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The request line and headers receive() reads. */
function fakeReq(): HttpRequest {
  return {
    getCaseSensitiveMethod: () => 'POST',
    getUrl: () => '/v1/portfolio/orders',
    getQuery: () => '',
    forEach: (fn: (k: string, v: string) => void) => fn('content-length', String(BODY_CAP_BYTES)),
  } as unknown as HttpRequest;
}

/** A response that hands back receive()'s onData handler. */
function fakeRes(): { res: HttpResponse; data: () => (chunk: ArrayBuffer, isLast: boolean) => void } {
  let onData: ((chunk: ArrayBuffer, isLast: boolean) => void) | null = null;
  const res = { onAborted: () => res, onData: (h: typeof onData) => { onData = h; return res; } } as unknown as HttpResponse;
  return { res, data: () => onData! };
}

function heapBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

test('a body streamed a byte per chunk holds about its own size, and arrives whole', () => {
  const CONNS = 8;
  const BYTES = BODY_CAP_BYTES - 1;
  const bodies: (Buffer | null)[] = new Array(CONNS).fill(null);
  const feeds = [];
  for (let c = 0; c < CONNS; c++) {
    const { res, data } = fakeRes();
    receive(res, fakeReq(), (_f: InFlight, raw: Buffer) => { bodies[c] = Buffer.from(raw); });
    feeds.push(data());
  }
  const before = heapBytes();
  // Every connection has sent all but its last byte, one byte per segment (uWS copies nothing: each chunk is fresh).
  for (let i = 0; i < BYTES; i++) {
    const byte = 0x30 + (i % 10);
    for (const feed of feeds) feed(new Uint8Array([byte]).buffer, false);
  }
  const held = (heapBytes() - before) / CONNS;
  for (const feed of feeds) feed(new Uint8Array([0x21]).buffer, true);
  for (const b of bodies) {
    assert.ok(b !== null);
    assert.equal(b.length, BYTES + 1);
    assert.equal(b[0], 0x30);
    assert.equal(b[BYTES - 1], 0x30 + ((BYTES - 1) % 10));
    assert.equal(b[BYTES], 0x21);
  }
  // The body itself is 64 KiB; allow twice that for the buffer it grows in.
  const mib = (held / 2 ** 20).toFixed(2);
  assert.ok(held < 2 * BODY_CAP_BYTES + 16 * 1024, `an unfinished ${BYTES}-byte body sent a byte per chunk holds ${mib} MiB`);
});
