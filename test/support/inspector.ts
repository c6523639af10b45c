// inspector: a small Chrome DevTools Protocol client for a child process
// started with `--inspect=127.0.0.1:<port>` (the launcher's nodeArgs, test/support/exchange.ts).
// Reaches the main thread and, through the NodeWorker domain, every worker
// thread by its name (the exchange names its workers "engine", "journal",
// "gateway-0", ...), so a benchmark can read per-thread heap figures or run
// the V8 CPU profiler on one thread of a running server without changing
// its code. Benchmarks, the soak and tools; loopback only.
//
// Invariants: one WebSocket per process; every call has a deadline (a thread
// that never reaches a point where V8 services inspector messages times out
// instead of hanging the benchmark); close() ends the socket, the child keeps
// running.

import WebSocket from 'ws';

export interface WorkerTarget {
  sessionId: string;
  /** Worker name as given to `new Worker(..., {name})`, e.g. "gateway-0"; "" when unnamed. */
  name: string;
  url: string;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class InspectorClient {
  private nextId = 0;
  private readonly pending = new Map<string, Pending>();
  readonly workers: WorkerTarget[] = [];
  private closed = false;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => this.onMessage(String(data)));
    ws.on('close', () => {
      this.closed = true;
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error('inspector: connection closed'));
      }
      this.pending.clear();
    });
  }

  /** Connects to the inspector on 127.0.0.1:port (the process's main thread). */
  static async connect(port: number, timeoutMs = 10_000): Promise<InspectorClient> {
    const deadline = Date.now() + timeoutMs;
    let url: string | null = null;
    let lastError: unknown = null;
    while (url === null && Date.now() < deadline) {
      try {
        const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl?: string }[];
        url = list[0]?.webSocketDebuggerUrl ?? null;
      } catch (e) {
        lastError = e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (url === null) throw new Error(`inspector: no target on 127.0.0.1:${port}: ${String(lastError)}`);
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 1 << 30 });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return new InspectorClient(ws);
  }

  private onMessage(text: string): void {
    const m = JSON.parse(text) as {
      id?: number;
      method?: string;
      params?: Record<string, unknown>;
      result?: unknown;
      error?: { message: string };
    };
    if (m.id !== undefined) {
      this.settle(`main:${m.id}`, m);
      return;
    }
    if (m.method === 'NodeWorker.attachedToWorker') {
      const p = m.params as { sessionId: string; workerInfo: { title: string; url: string } };
      // Titles read "[worker 4] gateway-0"; the name is what follows the bracket.
      const name = p.workerInfo.title.replace(/^\[worker [0-9]+\]\s*/, '');
      this.workers.push({ sessionId: p.sessionId, name, url: p.workerInfo.url });
      return;
    }
    if (m.method === 'NodeWorker.detachedFromWorker') {
      const sid = (m.params as { sessionId: string }).sessionId;
      const i = this.workers.findIndex((w) => w.sessionId === sid);
      if (i >= 0) this.workers.splice(i, 1);
      return;
    }
    if (m.method === 'NodeWorker.receivedMessageFromWorker') {
      const p = m.params as { sessionId: string; message: string };
      const inner = JSON.parse(p.message) as { id?: number; result?: unknown; error?: { message: string } };
      if (inner.id !== undefined) this.settle(`${p.sessionId}:${inner.id}`, inner);
    }
  }

  private settle(key: string, m: { result?: unknown; error?: { message: string } }): void {
    const p = this.pending.get(key);
    if (p === undefined) return;
    this.pending.delete(key);
    clearTimeout(p.timer);
    if (m.error !== undefined) p.reject(new Error(`inspector: ${m.error.message}`));
    else p.resolve(m.result);
  }

  private wait<T>(key: string, what: string, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(key);
        reject(new Error(`inspector: ${what} timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(key, { resolve: resolve as (v: unknown) => void, reject, timer });
    });
  }

  /** A method on the main thread. */
  call<T = unknown>(method: string, params: Record<string, unknown> = {}, timeoutMs = 10_000): Promise<T> {
    if (this.closed) return Promise.reject(new Error('inspector: closed'));
    const id = ++this.nextId;
    const p = this.wait<T>(`main:${id}`, method, timeoutMs);
    this.ws.send(JSON.stringify({ id, method, params }));
    return p;
  }

  /** Attaches to every worker thread (fills `workers`). */
  async attachWorkers(settleMs = 300): Promise<WorkerTarget[]> {
    await this.call('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await new Promise((r) => setTimeout(r, settleMs));
    return this.workers;
  }

  /** The worker named `name`; else an unnamed one whose script URL contains it (piscina's: "piscina"). */
  worker(name: string): WorkerTarget | null {
    return this.workers.find((w) => w.name === name) ?? this.workers.find((w) => w.name === '' && w.url.includes(name)) ?? null;
  }

  /** A method on one worker thread. */
  callWorker<T = unknown>(w: WorkerTarget, method: string, params: Record<string, unknown> = {}, timeoutMs = 10_000): Promise<T> {
    if (this.closed) return Promise.reject(new Error('inspector: closed'));
    const id = ++this.nextId;
    const p = this.wait<T>(`${w.sessionId}:${id}`, `${w.name}: ${method}`, timeoutMs);
    void this.call(
      'NodeWorker.sendMessageToWorker',
      { sessionId: w.sessionId, message: JSON.stringify({ id, method, params }) },
      timeoutMs,
    ).catch(() => undefined); // a send that fails leaves `p` unanswered: it rejects at its timeout, naming the method
    return p;
  }

  /** A method on `w`, or on the main thread when `w` is null. */
  callOn<T = unknown>(w: WorkerTarget | null, method: string, params: Record<string, unknown> = {}, timeoutMs = 10_000): Promise<T> {
    return w === null ? this.call<T>(method, params, timeoutMs) : this.callWorker<T>(w, method, params, timeoutMs);
  }

  /** Evaluates an expression that yields JSON text; on `w` or the main thread (null). */
  async evaluateJson<T>(w: WorkerTarget | null, expression: string, timeoutMs = 10_000): Promise<T> {
    const params = { expression, returnByValue: true };
    const r = (await this.callOn(w, 'Runtime.evaluate', params, timeoutMs)) as {
      result: { value?: unknown };
      exceptionDetails?: { text: string };
    };
    if (r.exceptionDetails !== undefined) throw new Error(`inspector: evaluate failed: ${r.exceptionDetails.text}`);
    return JSON.parse(String(r.result.value)) as T;
  }

  close(): void {
    this.ws.close();
  }
}

/** process.memoryUsage() of one thread: heap figures are the thread's own isolate; rss is the process. */
export interface ThreadMemory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export const MEMORY_EXPRESSION = 'JSON.stringify(process.memoryUsage())';
