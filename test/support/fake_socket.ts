// The part of the browser's WebSocket the web pages' lane (src/web/lib/lane.ts)
// uses, scripted by a test: installed as globalThis.WebSocket, it records
// every socket made and every command sent; the test opens, feeds and drops
// each one. DOM-free tests of the lane and the trader store.

export class FakeSocket {
  static readonly OPEN = 1;
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: any[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: string }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(text: string): void {
    this.sent.push(JSON.parse(text));
  }
  close(): void {
    this.readyState = 3;
  }
  open(): void {
    this.readyState = 1;
    this.onopen?.();
  }
  push(m: unknown): void {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
  drop(code = 1006): void {
    this.readyState = 3;
    this.onclose?.({ code });
  }
  last(): any {
    return this.sent[this.sent.length - 1];
  }
  /** Answers every subscribe sent so far with sid = 100 + its id; returns channel -> sid. */
  answerSubscribes(): Map<string, number> {
    const out = new Map<string, number>();
    for (const c of this.sent) {
      if (c.cmd !== 'subscribe') continue;
      const sid = 100 + c.id;
      out.set(c.params.channels[0], sid);
      this.push({ id: c.id, type: 'subscribed', msg: { channel: c.params.channels[0], sid } });
    }
    return out;
  }
}
