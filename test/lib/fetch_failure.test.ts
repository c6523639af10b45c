// fetchFailure (src/lib/fetch_failure.ts): a TLS handshake that failed wrote
// nothing (an https:// URL for a plain-HTTP port, a refused certificate), so
// the request was not sent; a connection reset at any other moment leaves the
// outcome unknown. Test process, a plain node:http server on 127.0.0.1.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fetchFailure } from '../../src/lib/fetch_failure.js';

function failed(code: string, message: string): TypeError {
  return Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error(message), { code }) });
}

test('fetchFailure: https:// to a plain-HTTP port was not sent, and says why in words', async () => {
  const server = createServer((_q, r) => r.end('plain')).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  try {
    const port = (server.address() as AddressInfo).port;
    const e = await fetch(`https://127.0.0.1:${port}/`).then(() => null, (x: unknown) => x);
    const f = fetchFailure(e);
    assert.equal(f?.sent, false, JSON.stringify(f));
    assert.match(f!.cause, /^the TLS handshake failed: the port does not speak TLS/);
  } finally {
    server.close();
  }
});

test('fetchFailure: a refused certificate was not sent; a reset outside the handshake may have been', () => {
  const refused = ['DEPTH_ZERO_SELF_SIGNED_CERT', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'];
  for (const code of refused) {
    const f = fetchFailure(failed(code, 'certificate'));
    assert.deepEqual([f?.sent, f?.cause], [false, `the TLS handshake failed: the server's certificate was refused (${code})`]);
  }
  assert.equal(fetchFailure(failed('ECONNRESET', 'other side closed'))?.sent, true);
  assert.equal(fetchFailure(failed('UND_ERR_SOCKET', 'other side closed'))?.sent, true);
});
