// HTTP/1.1 keep-alive senders for the load generator, one per virtual
// connection. Runs inside a load worker (a piscina thread). Three kinds, so
// that their cost can be measured against each other (transport_bench.ts):
//
// - `raw`:   one net.Socket per connection with a minimal HTTP/1.1 response
//            reader (status line, Content-Length or chunked body). Fastest
//            here, and the generator's CPU is the limit on a 2-core machine.
// - `http`:  node:http with one keep-alive Agent (maxSockets = connections).
// - `fetch`: global fetch (Node's bundled undici, keep-alive).
//
// Invariant for all three: at most one request in flight per connection, and
// never a pipelined one (the uWS server closes a connection that pipelines
// behind a held request). `done` is called exactly once per `send`, with
// status 0 when the request failed at the transport level.

import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';

export type TransportKind = 'raw' | 'http' | 'fetch';
export const TRANSPORT_KINDS: readonly TransportKind[] = ['raw', 'http', 'fetch'];

/** Called once per request: HTTP status (0 = transport error) and the body text. */
export type Done = (status: number, body: string) => void;

export interface Conn {
  /** `headers` are sent as given; content-length is added from `body`. */
  send(method: string, target: string, headers: Record<string, string>, body: string, done: Done): void;
  /** Opens the connection ahead of the first request where the kind allows it. */
  warm(): Promise<void>;
  /** Ends the connection; an in-flight request completes with status 0. */
  destroy(): void;
}

/** Opens connections of one kind to one origin; `destroyAll` ends them all. */
export interface ConnFactory {
  open(): Conn;
  destroyAll(): void;
}

export function connFactory(kind: TransportKind, baseUrl: string, connections: number): ConnFactory {
  const url = new URL(baseUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port || 80);
  if (url.protocol !== 'http:') throw new Error(`the load generator speaks plain http only: ${baseUrl}`);
  switch (kind) {
    case 'raw': {
      const conns: RawConn[] = [];
      return {
        open() {
          const c = new RawConn(host, port, url.host);
          conns.push(c);
          return c;
        },
        destroyAll() {
          for (const c of conns) c.destroy();
        },
      };
    }
    case 'http': {
      const agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections, scheduling: 'fifo' });
      return {
        open: () => new NodeHttpConn(agent, host, port),
        destroyAll: () => agent.destroy(),
      };
    }
    case 'fetch': {
      // One controller per request: a shared signal would collect one abort
      // listener per request for the whole run.
      const inFlight = new Set<AbortController>();
      return {
        open: () => new FetchConn(url.origin, inFlight),
        destroyAll: () => {
          for (const c of inFlight) c.abort();
        },
      };
    }
  }
}

// ------------------------------------------------------------------ raw

const CRLFCRLF = Buffer.from('\r\n\r\n');

/** What the response reader knows about the response being read. */
const enum BodyMode {
  Length = 0,
  Chunked = 1,
  UntilClose = 2,
}

class RawConn implements Conn {
  private sock: Socket | null = null;
  private connected: Promise<void> | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private done: Done | null = null;
  private status = 0;
  /** Offset of the body in `buf`, or -1 while the head is incomplete. */
  private bodyStart = -1;
  private bodyMode: BodyMode = BodyMode.Length;
  private bodyLength = 0;
  private method = '';

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly hostHeader: string,
  ) {}

  warm(): Promise<void> {
    this.ensure();
    return this.connected!;
  }

  private ensure(): Socket {
    if (this.sock !== null && !this.sock.destroyed) return this.sock;
    const s = connect({ host: this.host, port: this.port, noDelay: true });
    this.sock = s;
    this.buf = Buffer.alloc(0);
    this.bodyStart = -1;
    this.connected = new Promise<void>((resolve, reject) => {
      s.once('connect', () => resolve());
      s.once('error', reject);
    });
    // A warm() nobody awaits must not become an unhandled rejection; the
    // failure reaches the in-flight request through 'close'.
    this.connected.catch(() => undefined);
    s.on('data', (chunk: Buffer) => this.onData(chunk));
    s.on('error', () => undefined); // 'close' follows and settles the request
    s.on('close', () => this.onClose(s));
    return s;
  }

  send(method: string, target: string, headers: Record<string, string>, body: string, done: Done): void {
    if (this.done !== null) throw new Error('raw connection: a second request while one is in flight (no pipelining)');
    const s = this.ensure();
    this.done = done;
    this.method = method;
    let head = `${method} ${target} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`;
    for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
    if (body.length > 0 || method !== 'GET') head += `content-length: ${Buffer.byteLength(body)}\r\n`;
    s.write(head + '\r\n' + body);
  }

  destroy(): void {
    this.sock?.destroy();
  }

  private onClose(s: Socket): void {
    if (s !== this.sock) return;
    this.sock = null;
    if (this.done === null) return;
    if (this.bodyStart >= 0 && this.bodyMode === BodyMode.UntilClose) {
      this.finish(this.buf.toString('utf8', this.bodyStart));
      return;
    }
    const done = this.done;
    this.done = null;
    done(0, '');
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    if (this.done === null) return; // unsolicited bytes; the next response starts clean
    if (this.bodyStart < 0 && !this.parseHead()) return;
    switch (this.bodyMode) {
      case BodyMode.Length:
        if (this.buf.length - this.bodyStart >= this.bodyLength) {
          this.finish(this.buf.toString('utf8', this.bodyStart, this.bodyStart + this.bodyLength));
        }
        return;
      case BodyMode.Chunked: {
        const text = decodeChunked(this.buf, this.bodyStart);
        if (text !== null) this.finish(text);
        return;
      }
      case BodyMode.UntilClose:
        return;
    }
  }

  /** Reads the status line and framing headers; false while the head is incomplete. */
  private parseHead(): boolean {
    const end = this.buf.indexOf(CRLFCRLF);
    if (end < 0) return false;
    const head = this.buf.toString('latin1', 0, end);
    this.status = Number(head.slice(9, 12));
    this.bodyStart = end + 4;
    this.bodyMode = BodyMode.UntilClose;
    this.bodyLength = 0;
    if (this.method === 'HEAD' || this.status === 204 || this.status === 304 || (this.status >= 100 && this.status < 200)) {
      this.bodyMode = BodyMode.Length;
      return true;
    }
    const lower = head.toLowerCase();
    const cl = lower.indexOf('\r\ncontent-length:');
    if (cl >= 0) {
      this.bodyMode = BodyMode.Length;
      this.bodyLength = parseInt(lower.slice(cl + 17, lower.indexOf('\r\n', cl + 17) >>> 0), 10);
    } else if (/\r\ntransfer-encoding:[^\r]*chunked/.test(lower)) {
      this.bodyMode = BodyMode.Chunked;
    }
    return true;
  }

  private finish(text: string): void {
    const done = this.done!;
    this.done = null;
    this.bodyStart = -1;
    // Bytes beyond this response would be a protocol error here (we never
    // pipeline), so the buffer starts empty for the next response.
    this.buf = Buffer.alloc(0);
    done(this.status, text);
  }
}

/** The body of a complete chunked message starting at `from`, or null while incomplete. */
function decodeChunked(buf: Buffer, from: number): string | null {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at, 'latin1');
    if (lineEnd < 0) return null;
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
    if (!(size >= 0)) return ''; // malformed: end the response rather than hang
    at = lineEnd + 2;
    if (size === 0) {
      // Trailers (none expected) end with an empty line.
      return buf.indexOf(CRLFCRLF, lineEnd) >= 0 || buf.length >= at + 2 ? Buffer.concat(parts).toString('utf8') : null;
    }
    if (buf.length < at + size + 2) return null;
    parts.push(buf.subarray(at, at + size));
    at += size + 2;
  }
}

// ------------------------------------------------------------------ node:http

class NodeHttpConn implements Conn {
  constructor(
    private readonly agent: Agent,
    private readonly host: string,
    private readonly port: number,
  ) {}

  warm(): Promise<void> {
    return Promise.resolve();
  }

  send(method: string, target: string, headers: Record<string, string>, body: string, done: Done): void {
    let settled = false;
    const settle = (status: number, text: string): void => {
      if (settled) return;
      settled = true;
      done(status, text);
    };
    const h: Record<string, string | number> = { ...headers };
    if (body.length > 0 || method !== 'GET') h['content-length'] = Buffer.byteLength(body);
    let responded = false;
    const req = httpRequest({ agent: this.agent, host: this.host, port: this.port, method, path: target, headers: h }, (res) => {
      responded = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => settle(res.statusCode ?? 0, text));
      // 'close' without 'end' first: the response was cut off.
      res.on('close', () => settle(0, ''));
      res.on('error', () => settle(0, ''));
    });
    req.on('error', () => settle(0, ''));
    req.on('close', () => {
      if (!responded) settle(0, '');
    });
    req.end(body.length > 0 ? body : undefined);
  }

  destroy(): void {
    // Sockets belong to the shared Agent; ConnFactory.destroyAll ends them.
  }
}

// ------------------------------------------------------------------ fetch

class FetchConn implements Conn {
  constructor(
    private readonly origin: string,
    private readonly inFlight: Set<AbortController>,
  ) {}

  warm(): Promise<void> {
    return Promise.resolve();
  }

  send(method: string, target: string, headers: Record<string, string>, body: string, done: Done): void {
    const abort = new AbortController();
    this.inFlight.add(abort);
    const settle = (status: number, text: string): void => {
      this.inFlight.delete(abort);
      done(status, text);
    };
    fetch(this.origin + target, {
      method,
      headers,
      body: body.length > 0 ? body : undefined,
      signal: abort.signal,
    }).then(
      (res) =>
        res.text().then(
          (text) => settle(res.status, text),
          () => settle(0, ''),
        ),
      () => settle(0, ''),
    );
  }

  destroy(): void {
    // ConnFactory.destroyAll aborts every request in flight.
  }
}
