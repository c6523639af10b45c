// journal_thread: entry point of the journal worker (src/journal holds what
// it runs), one more consumer of the event ring. Group commit: take every record the ring holds, append it,
// fdatasync once, publish durable_seq (the last command whose completion is
// on disk) and ring the event ring's doorbell so parked gateways apply and
// answer what just became durable. Blocks freely (it is its own thread).
//
// Stop: the main thread stops the engine first (it drains its rings), then
// sets the stop word; the journal drains the ring to the end, syncs, closes
// its segment and exits.
//
// Fail-stop: a write, fdatasync or segment creation that fails ends the
// thread at once with a `failed` message (errno code, syscall, path, the
// durable seq so far); the main thread logs it and exits. durable_seq never
// passes what was synced, so nothing after it was answered or shown, and the
// failed group is never retried (see writer.ts).

import { parentPort, workerData } from 'node:worker_threads';
import { DurableSeq } from '../journal/durable.js';
import { journalIoFromEnv, storageFault } from '../journal/faults.js';
import { JournalControl } from '../journal/journal_control.js';
import { JournalWriter } from '../journal/writer.js';
import { LAYOUT_FINGERPRINT } from '../layout/records.js';
import { BroadcastConsumer } from '../ring/broadcast_ring.js';

export interface JournalThreadData {
  eventRing: SharedArrayBuffer;
  consumerIndex: number;
  durable: SharedArrayBuffer;
  /** JournalControl's buffer: the stop word and the counters. */
  control: SharedArrayBuffer;
  dataDir: string;
  fsync: boolean;
  nextSeq: number;
  segmentBytes?: number;
}

/** Records taken off the ring per write before syncing (bounds the latency of one group). */
const MAX_GROUP_RECORDS = 1 << 16;
const PARK_MS = 50;

function main(d: JournalThreadData, durable: DurableSeq): void {
  const consumer = new BroadcastConsumer(d.eventRing, LAYOUT_FINGERPRINT, d.consumerIndex);
  consumer.open();
  const control = new JournalControl(d.control);
  const writer = new JournalWriter({
    dataDir: d.dataDir, nextSeq: d.nextSeq, fsync: d.fsync, segmentBytes: d.segmentBytes,
    io: journalIoFromEnv(process.env.DX_JOURNAL_FAULT),
  });
  const bell = consumer.doorbell;
  parentPort?.postMessage({ type: 'ready' });
  for (;;) {
    let n = 0;
    for (let o = consumer.peek(); o >= 0 && n < MAX_GROUP_RECORDS; o = consumer.peek()) {
      writer.append(consumer.mem, o);
      consumer.advance();
      n++;
    }
    if (n > 0) {
      const before = durable.get();
      durable.set(writer.sync());
      control.report(writer.syncs, writer.records, writer.bytes, writer.segments);
      if (durable.get() !== before) bell.wake();
      continue;
    }
    if (control.stopRequested) break;
    bell.announce();
    if (consumer.hasUnread() || control.stopRequested) continue;
    bell.park(PARK_MS);
  }
  durable.set(writer.sync());
  writer.close();
  bell.wake();
  consumer.close();
  parentPort?.postMessage({ type: 'stopped', durable_seq: durable.get(), syncs: writer.syncs, records: writer.records });
}

const data = workerData as JournalThreadData;
const durableSeq = new DurableSeq(data.durable);
try {
  main(data, durableSeq);
} catch (e) {
  // Tell the main thread what failed before the error ends this thread; it
  // stops the process. Anything that is not a storage fault is our bug and
  // is reported as such.
  const fault = storageFault(e);
  parentPort?.postMessage({ type: 'failed', fault, error: (e as Error).stack ?? String(e), durable_seq: durableSeq.get() });
  throw e;
}
