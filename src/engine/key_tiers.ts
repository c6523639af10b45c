// key_tiers: the SetKeyTier command's rule (decide) and its KeyTierSet event's
// effect (evolve). A key's tier is state like its scopes: journaled,
// replayed, snapshotted, and folded by every read model, where the gateways
// turn it into the figures of the key's token buckets (src/gateway/buckets.ts
// RATE_TIERS for named tiers, the event's figures for custom). Engine thread
// and read models; no clock, no allocation.

import { KeyTierSet, RateTier, Reject, SetKeyTier } from '../layout/records.js';
import { fail } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import type { ExchangeState } from './state.js';

/** Largest custom figure (tokens per second or bucket size). */
export const TIER_FIGURE_MAX = 10_000_000;

/** The reject num of a SetKeyTier command, 0 when it may take effect. */
export function setKeyTierReject(s: ExchangeState, cm: Mem, co: number): number {
  const acc = s.accounts;
  const k = acc.keyRow(SetKeyTier.key_id(cm, co));
  if (k < 0 || acc.keyRevoked[k] === 1) return Reject.unknown_key;
  const tier = SetKeyTier.tier(cm, co);
  if (tier > RateTier.custom) return Reject.invalid_command;
  // Named tiers carry no figures; custom ones carry all four, each in range.
  const custom = tier === RateTier.custom;
  if (!figureOk(SetKeyTier.read_rate_per_s(cm, co), custom) || !figureOk(SetKeyTier.read_burst(cm, co), custom))
    return Reject.invalid_command;
  if (!figureOk(SetKeyTier.write_rate_per_s(cm, co), custom) || !figureOk(SetKeyTier.write_burst(cm, co), custom))
    return Reject.invalid_command;
  return 0;
}

function figureOk(v: number, custom: boolean): boolean {
  return custom ? v >= 1 && v <= TIER_FIGURE_MAX : v === 0;
}

/** Writes the KeyTierSet event's fields from the command (header written by the caller). */
export function writeKeyTierSet(cm: Mem, co: number, m: Mem, o: number): void {
  KeyTierSet.clear_reserved(m, o);
  KeyTierSet.set_key_id(m, o, SetKeyTier.key_id(cm, co));
  KeyTierSet.set_tier(m, o, SetKeyTier.tier(cm, co));
  KeyTierSet.set_read_rate_per_s(m, o, SetKeyTier.read_rate_per_s(cm, co));
  KeyTierSet.set_read_burst(m, o, SetKeyTier.read_burst(cm, co));
  KeyTierSet.set_write_rate_per_s(m, o, SetKeyTier.write_rate_per_s(cm, co));
  KeyTierSet.set_write_burst(m, o, SetKeyTier.write_burst(cm, co));
}

/** evolve: the key's tier and its custom figures (zeros for a named tier), in the key's row. */
export function applyKeyTierSet(s: ExchangeState, m: Mem, o: number): void {
  const acc = s.accounts;
  const k = acc.keyRow(KeyTierSet.key_id(m, o));
  if (k < 0) fail('evolve: KeyTierSet of an unknown key');
  acc.keyTier[k] = KeyTierSet.tier(m, o);
  const i = k * 4;
  acc.keyFigures[i] = KeyTierSet.read_rate_per_s(m, o);
  acc.keyFigures[i + 1] = KeyTierSet.read_burst(m, o);
  acc.keyFigures[i + 2] = KeyTierSet.write_rate_per_s(m, o);
  acc.keyFigures[i + 3] = KeyTierSet.write_burst(m, o);
}
