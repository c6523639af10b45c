// tables: how many entries each growing table of the read model holds (the
// engine's state as folded here, plus the projections), for /metrics
// (dx_table_entries) and the soak test, which checks that none grows
// without bound. Read on the thread that owns the Views; O(accounts +
// markets) per call, never on a hot path.

import type { ViewsData } from './model.js';

export function tableSizes(v: ViewsData): Record<string, number> {
  const s = v.state;
  const acc = s.accounts;
  const mk = s.markets;
  let terminal = 0;
  let rejected = 0;
  for (let a = 1; a <= acc.count; a++) {
    terminal += acc.termCount[a]!;
    rejected += acc.rejCount[a]!;
  }
  return {
    // Orders: live ones, and the terminal and rejected ones kept per account (terminal_cap, reject_cap).
    order_slots: s.orders.count,
    orders_live: s.liveOrders(),
    orders_retained_terminal: terminal,
    orders_retained_rejected: rejected,
    order_index: s.orderIndex.size,
    client_order_id_index: s.coidIndex.size,
    accounts: acc.count,
    positions: acc.posCount,
    keys: acc.keyRows,
    key_index: acc.keyIndex.size,
    withdrawals: acc.withdrawalRows,
    withdrawal_index: acc.widIndex.size,
    client_withdrawal_id_index: acc.cwidIndex.size,
    // Remembered deposit refs: at most DEPOSIT_REF_CAP per account.
    deposit_refs: acc.depositRefIndex.size,
    markets: mk.count,
    // Round rows in use (retained rounds and markets' evicted last rounds), and the index of retained ones.
    rounds: mk.roundRows,
    round_index: mk.roundIndex.size,
    timers: s.expiries.size + s.deadmen.size + s.closes.size + s.awaitingProposal.size + s.disputeDeadlines.size
      + s.seriesWaiting.size + s.oracleExpiries.size,
    tape_records: v.tapes.retainedRecords(),
    fill_records: v.fillRings.retainedRecords(),
  };
}
