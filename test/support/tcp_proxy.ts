// tcp_proxy: a TCP proxy to the exchange on 127.0.0.1 whose connections a
// test can cut (both sides see a dropped connection, no close frame) or
// black-hole (the exchange's side ends, the client's stays open and hears
// nothing: a link that drops everything and never delivers a FIN). Test
// process, main thread.

import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';

export class TcpProxy {
  readonly server: Server;
  /** Live pairs: [client side, exchange side]. */
  private readonly pairs = new Set<[Socket, Socket]>();
  /** Client sides of black-holed connections, held open until close(). */
  private readonly holes: Socket[] = [];
  port = 0;

  constructor(target: number) {
    this.server = createServer((c) => {
      const up = tcpConnect(target, '127.0.0.1');
      const pair: [Socket, Socket] = [c, up];
      this.pairs.add(pair);
      c.pipe(up).pipe(c);
      const end = (): void => {
        if (!this.pairs.delete(pair)) return; // black-holed: the client side stays
        c.destroy();
        up.destroy();
      };
      c.on('close', end).on('error', end);
      up.on('close', end).on('error', end);
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => {
      this.port = (this.server.address() as { port: number }).port;
      resolve();
    }));
  }

  /** Connections open through the proxy now. */
  get open(): number {
    return this.pairs.size;
  }

  /** Cuts every connection open now. */
  cut(): void {
    const pairs = [...this.pairs];
    this.pairs.clear();
    for (const [c, up] of pairs) {
      c.destroy();
      up.destroy();
    }
  }

  /** Every connection open now: nothing passes any more, the exchange's side ends, the client sees no close. */
  blackhole(): void {
    for (const pair of [...this.pairs]) {
      const [c, up] = pair;
      this.pairs.delete(pair);
      c.unpipe(up);
      up.unpipe(c);
      c.pause();
      this.holes.push(c);
      up.destroy();
    }
  }

  close(): Promise<void> {
    this.cut();
    for (const c of this.holes.splice(0)) c.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
