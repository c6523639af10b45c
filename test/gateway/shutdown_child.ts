// Child process of shutdown.test.ts (not a test file): starts an exchange,
// serves a few requests on every listener, stops it, prints `stopped <ms>`
// and then does nothing, so that the process exits by itself only if
// stop() left no handle (listener, worker, timer) behind.

import { startTestExchange } from '../support/exchange.js';
import { closeFetchConnections, newAccount, newMarket, order, signedRaw } from '../support/harness.js';

const gateways = Number(process.argv[2] ?? '1');
const tx = await startTestExchange({ gateways });
const k = await newAccount(tx);
const m = await newMarket(tx);
await k.client.placeOrder(order(m));
await k.keys.listKeys();
await tx.admin.health();
const r = await signedRaw(tx.port, k, 'GET', '/v1/portfolio/orders');
if (r.status !== 200) throw new Error(`unexpected ${r.status}`);
await closeFetchConnections();
const t0 = performance.now();
await tx.stop();
process.stdout.write(`stopped ${Math.round(performance.now() - t0)}\n`);
