// gateway_core: a GatewayCore on rings of its own with no engine behind them,
// its waiter parking as on a gateway thread: what it holds is never
// sequenced, so a held request ends in its 504. For tests of the core's own
// timing and of a lane built on it (test/gateway/clock_step, test/ws/resume_clock).

import { GatewayCore } from '../../src/gateway/core.js';
import { LAYOUT_FINGERPRINT } from '../../src/layout/records.js';
import { BroadcastRing } from '../../src/ring/broadcast_ring.js';
import { CommandProducer } from '../../src/ring/command_producer.js';
import { Doorbell } from '../../src/ring/doorbell.js';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { Views } from '../../src/views/views.js';

export function coreWithoutEngine(budgetMs: number): GatewayCore {
  return new GatewayCore({
    producerId: 1,
    producer: new CommandProducer(SpscRing.allocate(1 << 16, LAYOUT_FINGERPRINT), Doorbell.attach(Doorbell.allocate()), LAYOUT_FINGERPRINT),
    eventRing: BroadcastRing.allocate(1 << 20, 2, LAYOUT_FINGERPRINT),
    consumerIndex: 0,
    views: new Views({}),
    response_budget_ms: budgetMs,
    shed_pending: 1024,
    wait: 'park',
  });
}
