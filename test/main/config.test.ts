// The WebSocket in-flight cap as an operator setting (src/main/config.ts):
// DX_WS_MAX_IN_FLIGHT and --ws-max-in-flight (the flag wins), default 1000,
// out-of-range and non-numeric values refused with the option named; end to
// end, an exchange process started with the flag reports the cap at
// start_binary and sheds the record past it (seen through DxOrderStream), and one started with a bad
// value exits 2 with one line. The snapshot capture step (--snapshot-step-bytes) the same way.
// Listeners: a host may not be empty (uWS would listen on every interface), a
// port is 0..65535 (uWS takes it modulo 65536) and no two listeners share one;
// integers have at most 15 digits and table capacities and gateway counts are
// bounded, so a typo is a message, not a start that never ends.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DxOrderStream } from '../../src/client/order_stream.js';
import { MAX_PENDING } from '../../src/gateway/core.js';
import { engineConfigOf, loadConfig } from '../../src/main/config.js';
import { ExchangeProcess, spawnExchange } from '../support/exchange.js';

test('config: DX_WS_MAX_IN_FLIGHT and --ws-max-in-flight set the WebSocket in-flight cap (default 1000, the flag wins); ' +
  'bad values are refused naming the option', () => {
  assert.equal(loadConfig([], {}).ws_max_in_flight, 1000);
  assert.equal(loadConfig([], { DX_WS_MAX_IN_FLIGHT: '50' }).ws_max_in_flight, 50);
  assert.equal(loadConfig(['--ws-max-in-flight', '70'], { DX_WS_MAX_IN_FLIGHT: '50' }).ws_max_in_flight, 70);
  assert.equal(loadConfig(['--ws-max-in-flight', String(MAX_PENDING)], {}).ws_max_in_flight, MAX_PENDING);
  const range = new RegExp(`Error: ws-max-in-flight must be 1\\.\\.${MAX_PENDING} `);
  assert.throws(() => loadConfig(['--ws-max-in-flight', '0'], {}), range);
  assert.throws(() => loadConfig(['--ws-max-in-flight', String(MAX_PENDING + 1)], {}), range);
  assert.throws(() => loadConfig(['--ws-max-in-flight', '1e3'], {}), /--ws-max-in-flight: expected a non-negative integer, got "1e3"$/);
  assert.throws(() => loadConfig(['--ws-max-in-flight', '-1'], {}), /--ws-max-in-flight/);
  assert.throws(() => loadConfig([], { DX_WS_MAX_IN_FLIGHT: 'many' }), /Error: DX_WS_MAX_IN_FLIGHT: expected a non-negative integer/);
  assert.throws(() => loadConfig(['--ws-max-in-flight'], {}), /Error: --ws-max-in-flight needs a value$/);
});

test('config: an exchange process started with --ws-max-in-flight 2 reports it and sheds a third held record; ' +
  'DX_WS_MAX_IN_FLIGHT=0 exits 2 with one line', { timeout: 60_000 }, async () => {
  const ex = await spawnExchange({ demo: false, ws_max_in_flight: 2 }, { logLevel: 'warn' });
  let s: DxOrderStream | null = null;
  try {
    const admin = ex.admin();
    const { account_id } = await admin.createAccount();
    const key = await admin.createKey(account_id, ['read', 'trade']);
    s = await DxOrderStream.open({ url: ex.base, keyId: key.key_id, secret: key.secret, reconnect: false });
    assert.equal(s.maxInFlight, 2, 'start_binary reports the cap');
    // A token the operator configured is never printed: the start-up text names the variable.
    const startup = ex.startupLines.join('\n');
    assert.ok(!startup.includes(ex.token), startup);
    assert.match(startup, /authorization: Bearer \$DX_ADMIN_TOKEN/);
    // Commands of one turn go out as one frame, whose records are submitted in one turn, before any outcome can come back:
    // the third finds two held.
    const rs = await Promise.all([1, 2, 3].map((i) => s!.cancel(String(900 + i))));
    assert.deepEqual(rs.map((r) => `${r.status} ${r.code}`), ['rejected unknown_order', 'rejected unknown_order', 'refused shed']);
  } finally {
    await s?.close();
    await ex.stop();
  }
  const bad = new ExchangeProcess({ demo: false }, { env: { DX_WS_MAX_IN_FLIGHT: '0' } });
  const exit = await bad.exited;
  await bad.stop();
  assert.equal(exit.code, 2, bad.stderrTail());
  assert.match(bad.stderrTail(), new RegExp(`^dx: ws-max-in-flight must be 1\\.\\.${MAX_PENDING} `, 'm'));
});

test('config: DX_SNAPSHOT_STEP_BYTES and --snapshot-step-bytes set a snapshot capture step (default 16 MiB, at least 4096)', () => {
  assert.equal(loadConfig([], {}).snapshot_step_bytes, 16 << 20);
  assert.equal(loadConfig([], { DX_SNAPSHOT_STEP_BYTES: '65536' }).snapshot_step_bytes, 65_536);
  assert.equal(loadConfig(['--snapshot-step-bytes', '4096'], { DX_SNAPSHOT_STEP_BYTES: '65536' }).snapshot_step_bytes, 4096);
  assert.throws(() => loadConfig(['--snapshot-step-bytes', '4095'], {}), /Error: snapshot-step-bytes must be at least 4096$/);
  const notANumber = /Error: DX_SNAPSHOT_STEP_BYTES: expected a non-negative integer/;
  assert.throws(() => loadConfig([], { DX_SNAPSHOT_STEP_BYTES: '16MiB' }), notANumber);
});

test('config: the timer figures are bounded (Node runs a timer above 2^31-1 ms after 1 ms: a busy loop, not a long wait)', () => {
  assert.equal(loadConfig(['--response-budget-ms', '600000'], {}).response_budget_ms, 600_000);
  for (const v of ['0', '600001', '3000000000']) {
    assert.throws(() => loadConfig(['--response-budget-ms', v], {}), /^Error: response-budget-ms must be 1\.\.600000 \(10 minutes\)$/);
  }
  const nats = ['--replicate', 'on'];
  assert.equal(loadConfig([...nats, '--heartbeat-ms', '60000', '--lease-ms', '600000'], {}).lease_ms, 600_000);
  const heartbeat = /^Error: heartbeat-ms must be 10\.\.60000$/;
  assert.throws(() => loadConfig([...nats, '--heartbeat-ms', '60001', '--lease-ms', '600000'], {}), heartbeat);
  const lease = /^Error: lease-ms must be at least twice heartbeat-ms and at most 600000/;
  assert.throws(() => loadConfig([...nats, '--lease-ms', '3000000000'], {}), lease);
});

test('config: the retention caps (DX_DEPOSIT_REF_CAP and the others) reach the engine configuration and are 1..1000000', () => {
  assert.equal(engineConfigOf(loadConfig([], {})).deposit_ref_cap, 1000);
  const cfg = loadConfig(['--deposit-ref-cap', '7'], { DX_DEPOSIT_REF_CAP: '3', DX_WITHDRAWAL_CAP: '5' });
  assert.equal(engineConfigOf(cfg).deposit_ref_cap, 7, 'the flag wins');
  assert.equal(engineConfigOf(cfg).withdrawal_cap, 5);
  for (const k of ['terminal', 'reject', 'round', 'withdrawal', 'revoked-key', 'deposit-ref']) {
    assert.throws(() => loadConfig([`--${k}-cap`, '0'], {}), new RegExp(`Error: ${k}-cap must be 1\\.\\.1000000$`));
    assert.throws(() => loadConfig([`--${k}-cap`, '1000001'], {}), new RegExp(`Error: ${k}-cap must be 1\\.\\.1000000$`));
  }
});

test('config: an empty host, a port past 65535, two listeners on one port, huge integers and capacities are refused by name', () => {
  assert.throws(() => loadConfig(['--admin-host', ''], {}), /^Error: --admin-host: expected a host address/);
  // A token with spaces around it could never be presented in an Authorization header.
  for (const token of [' tok', 'tok ', '\ttok']) {
    assert.throws(() => loadConfig(['--admin-token', token], {}), /^Error: admin-token: expected no spaces before or after the token$/);
  }
  assert.doesNotThrow(() => loadConfig([], { DX_ADMIN_TOKEN: 'a-token' }));
  // An unknown log level would silently log at info.
  const levels = /^Error: DX_LOG_LEVEL: expected debug, info, warn or error, got "verbose"$/;
  assert.throws(() => loadConfig([], { DX_LOG_LEVEL: 'verbose' }), levels);
  assert.throws(() => loadConfig([], { DX_LOG_LEVEL: 'toString' }), /^Error: DX_LOG_LEVEL: expected/);
  for (const level of ['debug', 'info', 'warn', 'error', '']) assert.doesNotThrow(() => loadConfig([], { DX_LOG_LEVEL: level }));
  assert.throws(() => loadConfig(['--host', ' '], {}), /^Error: --host: expected a host address/);
  // `--data-dir "$DIR"` with DIR unset would start an empty exchange in the working directory.
  assert.throws(() => loadConfig(['--data-dir', ''], {}), /^Error: --data-dir: expected a directory, got an empty value$/);
  assert.throws(() => loadConfig(['--web-dir', ''], {}), /^Error: --web-dir: expected a directory, got an empty value$/);
  assert.equal(loadConfig([], { DX_ADMIN_HOST: '' }).admin_host, '127.0.0.1', 'an empty variable counts as unset');
  assert.throws(() => loadConfig(['--admin-port', '84000'], {}), /^Error: --admin-port: expected a port 0\.\.65535, got "84000"$/);
  assert.throws(() => loadConfig([], { DX_PORT: '70000' }), /^Error: DX_PORT: expected a port/);
  assert.equal(loadConfig(['--port', '65535'], {}).port, 65535);
  assert.throws(() => loadConfig(['--port', '18080', '--admin-port', '18080'], {}), /port and admin-port are both 18080 \(on 127\.0\.0\.1/);
  // Spelled differently, the same address (localhost, 127.1), or a wildcard that overlaps it.
  for (const host of [['--admin-host', 'localhost'], ['--admin-host', '127.1'], ['--host', '0.0.0.0']]) {
    assert.throws(() => loadConfig(['--port', '18080', '--admin-port', '18080', ...host], {}), /each listener needs a port of its own/);
  }
  assert.equal(loadConfig(['--port', '0', '--admin-port', '0', '--accounts-port', '0'], {}).port, 0, 'port 0 (any free one) may repeat');
  assert.throws(() => loadConfig(['--gateways', '99999999999999999999999'], {}), /^Error: --gateways: expected at most 15 digits/);
  assert.throws(() => loadConfig(['--gateways', '29'], {}), /^Error: gateways must be 1\.\.28$/);
  assert.throws(() => loadConfig(['--position-capacity', '600000000'], {}), /^Error: position-capacity must be at most 268435456$/);
  assert.throws(() => loadConfig(['--account-capacity', '1073741825'], {}), /^Error: account-capacity must be at most/);
});
