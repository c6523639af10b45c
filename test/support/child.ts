// NodeChild: a node program run as a child process by tests, tools and
// benchmarks (the exchange, the hello-world and Fastify peers, ...): stdout
// split into lines that callers can wait for, stderr kept as a bounded tail
// and as lines, and the ways to end it (SIGKILL, or SIGTERM with a deadline).
// Main thread of the parent process.
//
// Invariant: every child is registered until it has exited, and a process
// 'exit' hook SIGKILLs whatever is left, so a run that throws never leaves a
// server behind (callers still stop their children in finally blocks).

import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Registers any child process (a NATS server, say) with the exit hook until it exits. */
export function killOnExit(proc: ChildProcess): void {
  installExitHook();
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers cannot wait: SIGKILL whatever is still running.
  process.on('exit', () => {
    for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
}

const STDERR_TAIL_CHARS = 6000;

export class NodeChild {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly spawnedAt = performance.now();
  readonly exited: Promise<Exit>;
  private readonly lines: string[] = [];
  private stdoutPartial = '';
  private stderrPartial = '';
  private tail = '';
  private readonly waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];

  /**
   * Spawns `node ...args`, or `launcher... node ...args` when `launcher` is
   * given (a program that execs the rest in its place, e.g. `prlimit
   * --fsize=N`, so the pid stays node's). `onStdoutLine` / `onStderrLine` see
   * every complete line as it arrives (before any waitForLine resolves on it).
   */
  constructor(
    readonly label: string,
    args: string[],
    env: NodeJS.ProcessEnv = process.env,
    private readonly hooks: { onStdoutLine?: (line: string) => void; onStderrLine?: (line: string) => void } = {},
    launcher: string[] = [],
  ) {
    installExitHook();
    const [cmd, ...pre] = [...launcher, process.execPath];
    this.proc = spawn(cmd!, [...pre, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
    if (this.proc.pid === undefined) throw new Error(`${label}: spawn failed`);
    this.pid = this.proc.pid;
    killOnExit(this.proc);
    this.exited = new Promise((resolve) => {
      this.proc.once('exit', (code, signal) => resolve({ code, signal }));
    });
    this.proc.stdout!.setEncoding('utf8');
    this.proc.stdout!.on('data', (s: string) => this.onStdout(s));
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (s: string) => this.onStderr(s));
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** The last few KB of stderr (the exchange logs JSON lines there). */
  stderrTail(): string {
    return this.tail;
  }

  private onStdout(s: string): void {
    const parts = (this.stdoutPartial + s).split('\n');
    this.stdoutPartial = parts.pop()!;
    for (const line of parts) {
      this.hooks.onStdoutLine?.(line);
      this.lines.push(line);
      for (let i = this.waiters.length - 1; i >= 0; i--) {
        const m = this.waiters[i]!.re.exec(line);
        if (m) {
          this.waiters[i]!.resolve(m);
          this.waiters.splice(i, 1);
        }
      }
    }
  }

  private onStderr(s: string): void {
    this.tail = (this.tail + s).slice(-STDERR_TAIL_CHARS);
    if (this.hooks.onStderrLine === undefined) return;
    const parts = (this.stderrPartial + s).split('\n');
    this.stderrPartial = parts.pop()!;
    for (const line of parts) this.hooks.onStderrLine(line);
  }

  /** Resolves with the first stdout line matching `re`; rejects when the process exits first or after timeoutMs. */
  async waitForLine(re: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    for (const line of this.lines) {
      const m = re.exec(line);
      if (m) return m;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        new Promise<RegExpExecArray>((resolve) => this.waiters.push({ re, resolve })),
        this.exited.then(({ code, signal }) => {
          throw new Error(`${this.label} exited (code ${code}, signal ${signal}) before printing ${re}; stderr: ${this.tail.slice(-3000)}`);
        }),
        new Promise<never>((_r, reject) => {
          timer = setTimeout(
            () => reject(new Error(`${this.label}: no ${re} on stdout within ${timeoutMs} ms; stderr: ${this.tail.slice(-3000)}`)),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGKILL and wait for the exit. */
  async kill(): Promise<Exit> {
    if (this.running) this.proc.kill('SIGKILL');
    return this.exited;
  }

  /** SIGTERM, wait up to graceMs for the exit, then SIGKILL. Resolves with how it ended. */
  async terminate(graceMs = 20_000): Promise<Exit & { killed: boolean }> {
    if (!this.running) return { ...(await this.exited), killed: false };
    this.proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const first = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (first !== 'late') return { ...first, killed: false };
    this.proc.kill('SIGKILL');
    return { ...(await this.exited), killed: true };
  }
}
