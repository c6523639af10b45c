// journal_thread: entry point of the journal worker (src/journal holds what
// it runs), one more consumer of the event ring. Group commit: take every
// record the ring holds, append it, fdatasync once, publish durable_seq (the
// last command whose completion is on disk) and ring durable_seq's doorbell
// so parked gateways apply and answer what just became durable. Between
// groups it waits by its wait strategy (DX_WAIT, src/ring/wait.ts; park:
// on the event ring's doorbell, which the engine rings). Blocks freely (it
// is its own thread).
//
// Stop: the main thread stops the engine first (it drains its rings), then
// sets the stop word; the journal drains the ring to the end, syncs, closes
// its segment and exits.
//
// Fail-stop: a write, fdatasync or segment creation that fails ends the
// thread at once with a `failed` message (errno code, syscall, path, the
// durable seq so far); the main thread logs it and exits. durable_seq never
// passes what was synced, so nothing after it was answered or shown, and the
// failed group is never retried (see writer.ts). A storage failure also
// leaves the synced marker, so that the next start keeps only what was
// synced (src/journal/cut.ts).

import { parentPort, workerData } from 'node:worker_threads';
import { writeSyncedMarker } from '../journal/cut.js';
import { DurableSeq } from '../journal/durable.js';
import { journalIoFromEnv, storageFault } from '../journal/faults.js';
import { JournalControl } from '../journal/journal_control.js';
import { JournalWriter } from '../journal/writer.js';
import { LAYOUT_FINGERPRINT } from '../layout/records.js';
import { monoUs } from '../lib/mono_clock.js';
import { BroadcastConsumer } from '../ring/broadcast_ring.js';
import { SeqStamps } from '../ring/seq_stamps.js';
import { waitStrategy, type WaitKind } from '../ring/wait.js';

export interface JournalThreadData {
  eventRing: SharedArrayBuffer;
  consumerIndex: number;
  durable: SharedArrayBuffer;
  /** JournalControl's buffer: the stop word, the counters, the fsync histogram. */
  control: SharedArrayBuffer;
  /** SeqStamps the journal writes (durable_seq, time) into per group commit: the durable stage of held requests. */
  durableStamps: SharedArrayBuffer;
  dataDir: string;
  fsync: boolean;
  nextSeq: number;
  segmentBytes?: number;
  /** How the thread waits for events between groups (default park). */
  wait?: WaitKind;
}

/** Records taken off the ring per write before syncing (bounds the latency of one group). */
const MAX_GROUP_RECORDS = 1 << 16;

/** The writer, once made: a storage failure records its last synced seq (the synced marker). */
let opened: JournalWriter | null = null;

function main(d: JournalThreadData, durable: DurableSeq): void {
  const consumer = new BroadcastConsumer(d.eventRing, LAYOUT_FINGERPRINT, d.consumerIndex);
  consumer.open();
  const control = new JournalControl(d.control);
  const writer = new JournalWriter({
    dataDir: d.dataDir, nextSeq: d.nextSeq, fsync: d.fsync, segmentBytes: d.segmentBytes,
    io: journalIoFromEnv(process.env.DX_JOURNAL_FAULT),
  });
  opened = writer;
  const stamps = new SeqStamps(d.durableStamps);
  // The stop word is a source too: the main thread rings the doorbell after setting it.
  const wait = waitStrategy(d.wait ?? 'park', consumer.doorbell, { hasUnread: () => consumer.hasUnread() || control.stopRequested });
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
      const syncs = writer.syncs;
      const t0 = monoUs();
      const seq = writer.sync();
      const t1 = monoUs();
      if (d.fsync && writer.syncs !== syncs) control.fsyncs.record(t1 - t0);
      control.report(writer.syncs, writer.records, writer.bytes, writer.segments);
      if (seq > before) {
        // Stamped before durable_seq moves, so whoever sees the new durable_seq finds its stamp.
        stamps.stamp(seq, t1);
        durable.set(seq);
      }
      // Rung after every group, moved or not: in the middle of a command larger than the ring, durable_seq
      // stands still and the gateway cores must still wake to take (spill) what fills the ring (GatewayCore.drain).
      durable.doorbell.wake();
      wait.idle(n);
      continue;
    }
    if (control.stopRequested) break;
    wait.idle(0);
  }
  durable.set(writer.sync());
  writer.close();
  durable.doorbell.wake();
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
  // What was written after the last fdatasync may read back from the page cache without being on disk: the next
  // start keeps only what was synced (src/journal/cut.ts). Best effort on a failing disk.
  const w = opened as JournalWriter | null; // set inside main(), which the compiler does not follow here
  let marker: string | null = null;
  if (fault !== null && w === null) marker = 'the journal had not opened';
  else if (fault !== null && !data.fsync) marker = 'durability none: nothing was synced';
  else if (fault !== null) marker = writeSyncedMarker(data.dataDir, w!.durableSeq(), `${fault.syscall} ${fault.code}`) ?? 'written';
  parentPort?.postMessage({
    type: 'failed', fault, error: (e as Error).stack ?? String(e), durable_seq: durableSeq.get(), synced_marker: marker,
  });
  throw e;
}
