// protocol: parsing and validation of WebSocket commands (pure functions),
// the part of the error taxonomy that needs no exchange.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_WS_CONFIG, WsCommandError, parseCommand, wsConfig } from '../../src/ws/protocol.js';

const cfg = wsConfig();

function code(text: string): string {
  try {
    parseCommand(text, cfg);
  } catch (e) {
    if (e instanceof WsCommandError) return e.code;
    throw e;
  }
  return 'ok';
}

describe('ws protocol', () => {
  it('protocol: subscribe keeps channel and market order, drops duplicates', () => {
    const env = parseCommand(
      JSON.stringify({ id: 7, cmd: 'subscribe', params: { channels: ['trades', 'oracle', 'trades'], market_ids: [3, 1, 3] } }),
      cfg,
    );
    assert.deepEqual(env, {
      id: 7,
      command: { cmd: 'subscribe', channels: ['trades', 'oracle'], market_ids: [3, 1], resume_from_seq: null },
    });
  });

  it('protocol: resume_from_seq is a u64 string for the user channel', () => {
    const env = parseCommand(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['user'], resume_from_seq: '42' } }), cfg);
    assert.equal(env.command.cmd === 'subscribe' && env.command.resume_from_seq, 42);
    assert.equal(code(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['user'], resume_from_seq: '-1' } })), 'bad_params');
    assert.equal(
      code(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['user'], resume_from_seq: '123456789012345678901' } })),
      'bad_params',
    );
  });

  it('protocol: each kind of mistake maps to its code', () => {
    const cases: [unknown, string][] = [
      ['{', 'invalid_message'],
      [[], 'invalid_message'],
      [{ cmd: 'subscribe' }, 'invalid_message'],
      [{ id: 1.5, cmd: 'subscribe' }, 'invalid_message'],
      [{ id: 1, cmd: 3 }, 'invalid_message'],
      [{ id: 1, cmd: 'subscribe', params: [] }, 'bad_params'],
      [{ id: 1, cmd: 'ping' }, 'unknown_command'],
      [{ id: 1, cmd: 'ping', params: 5 }, 'unknown_command'],
      [{ id: 1, cmd: 'ping', params: null }, 'unknown_command'],
      [{ id: 1, cmd: 'toString', params: {} }, 'unknown_command'],
      [{ id: 1, cmd: 'subscribe', params: { channels: ['ticker'] } }, 'unknown_channel'],
      [{ id: 1, cmd: 'subscribe', params: { channels: [7] } }, 'bad_params'],
      [
        {
          id: 1,
          cmd: 'subscribe',
          params: { channels: ['trades'], market_ids: Array.from({ length: DEFAULT_WS_CONFIG.max_market_ids + 1 }, (_x, i) => i + 1) },
        },
        'bad_params',
      ],
      [{ id: 1, cmd: 'subscribe', params: { channels: ['trades'], market_ids: [4294967296] } }, 'bad_params'],
      [{ id: 1, cmd: 'unsubscribe', params: { sids: [0] } }, 'bad_params'],
      [{ id: 1, cmd: 'unsubscribe', params: {} }, 'bad_params'],
      [{ id: 1, cmd: 'update_subscription', params: { sid: 2, action: 'get_snapshot', market_ids: [1] } }, 'bad_params'],
      [{ id: 1, cmd: 'update_subscription', params: { sid: 2, action: 'delete_markets' } }, 'bad_params'],
      [{ id: 1, cmd: 'update_subscription', params: { action: 'get_snapshot' } }, 'bad_params'],
    ];
    for (const [v, expected] of cases) assert.equal(code(typeof v === 'string' ? v : JSON.stringify(v)), expected, JSON.stringify(v));
    assert.equal(code(JSON.stringify({ id: 0, cmd: 'unsubscribe', params: { sids: [5, 5, 6] } })), 'ok');
  });

  it('protocol: the configuration refuses an idle timeout uWS cannot honour', () => {
    assert.throws(() => wsConfig({ idle_timeout_s: 6 }), /idle_timeout_s/);
    assert.throws(() => wsConfig({ idle_timeout_s: 10 }), /idle_timeout_s/);
    assert.equal(wsConfig({ idle_timeout_s: 0 }).idle_timeout_s, 0);
    assert.throws(() => wsConfig({ slow_consumer_bytes: -1 }), /slow_consumer_bytes/);
  });
});
