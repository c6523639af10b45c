// app: the operator console on the control-plane port. The operator types
// the bearer token (kept in memory, or sessionStorage for this tab); every
// read and action goes through the existing /admin API and /metrics. Health
// and live charts; series and rounds; the oracle; accounts and keys; pending
// withdrawals. Every action that changes the exchange asks to be confirmed
// first. Browser main thread.

import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  AdminAccount,
  AdminKeyCreated,
  AdminMarkets,
  AdminOracle,
  FeeSchedules,
  Health,
  Ledger,
  PendingWithdrawals,
  SeriesCreated,
} from '../../client/types.js';
import { AdminApi, ApiError, errorText, newClientOrderId, outcomeUnknown } from '../lib/api.js';
import { clock, countdown, dollars, oraclePrice } from '../lib/format.js';
import { markInteractive, useNow, useRememberedSession } from '../lib/hooks.js';
import { SignInPage, SigningIn } from '../lib/signin.js';
import { TimeChart, type Line } from './charts.js';
import { MetricsHistory } from './metrics.js';
import { Head, value, checked } from '../lib/ui.js';

const REMEMBER_KEY = 'dx-admin-token';
const POLL_MS = 1000;

/** The token works if the health read answers. */
async function signIn(token: string): Promise<AdminApi> {
  const api = new AdminApi(token);
  await api.get<Health>('/admin/health');
  return api;
}

export function App() {
  const s = useRememberedSession(REMEMBER_KEY, signIn);
  if (s.session !== null) return <Console api={s.session} onSignOut={s.signOut} />;
  if (!s.ready) return <SigningIn />;
  return <SignIn error={s.error} onSignedIn={(api, token, remember) => s.signedIn(api, remember ? token : null)} />;
}

function SignIn(props: { error: string; onSignedIn: (a: AdminApi, token: string, remember: boolean) => void }) {
  const [token, setToken] = useState('');
  return (
    <SignInPage
      title="dx operator console"
      intro={
        <>
          Paste the operator token (printed at start, and in <code>data/admin-token</code>).
        </>
      }
      rememberNote="Remember for this tab"
      error={props.error}
      submit={async (remember) => props.onSignedIn(await signIn(token.trim()), token.trim(), remember)}
    >
      <label for="admin-token">Operator token</label>
      <input id="admin-token" type="password" autoComplete="current-password" required value={token} onInput={(e) => setToken(value(e))} />
    </SignInPage>
  );
}

/** Polls a GET every `ms`; returns the last answer (or error) and a refresh function. */
function usePoll<T>(api: AdminApi, target: string, ms: number): { data: T | null; error: string; refresh: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState('');
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    const run = (): void => {
      api.get<T>(target).then(
        (d) => {
          if (!live) return;
          setData(d);
          setError('');
        },
        (e) => live && setError(errorText(e)),
      );
    };
    run();
    const t = setInterval(run, ms);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [api, target, ms, tick]);
  return { data, error, refresh: () => setTick((x) => x + 1) };
}

/** A button that asks "are you sure?" in place, then runs the action and reports its outcome. */
function Confirmed(props: { label: string; question: string; run: () => Promise<string>; danger?: boolean; onDone?: () => void }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const confirm = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  const go = async (): Promise<void> => {
    setBusy(true);
    try {
      setMsg({ ok: true, text: await props.run() });
      props.onDone?.();
    } catch (e) {
      setMsg({ ok: false, text: errorText(e) });
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return (
    <span class="confirm">
      {asking ? (
        <span role="group" aria-label={props.question}>
          <span>{props.question}</span>{' '}
          <button type="button" ref={confirm} class={props.danger ? 'danger' : 'primary'} disabled={busy} onClick={() => void go()}>
            Confirm
          </button>{' '}
          <button type="button" onClick={() => setAsking(false)}>
            Cancel
          </button>
        </span>
      ) : (
        <button
          type="button"
          class={props.danger ? 'danger' : ''}
          onClick={() => {
            setMsg(null);
            setAsking(true);
          }}
        >
          {props.label}
        </button>
      )}
      {msg && (
        <span role={msg.ok ? 'status' : 'alert'} class={msg.ok ? 'ok' : 'error'}>
          {msg.text}
        </span>
      )}
    </span>
  );
}

function Console(props: { api: AdminApi; onSignOut: () => void }) {
  const { api } = props;
  return (
    <div class="console">
      <header class="top">
        <h1>dx operator console</h1>
        <span class="key" />
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <HealthPanel api={api} />
      <MarketsPanel api={api} />
      <div class="grid two">
        <OraclePanel api={api} />
        <WithdrawalsPanel api={api} />
      </div>
      <div class="grid two">
        <MoneyPanel api={api} />
        <FeesPanel api={api} />
      </div>
      <AccountsPanel api={api} />
    </div>
  );
}

// ---- health and charts -----------------------------------------------------------------

function HealthPanel(props: { api: AdminApi }) {
  const history = useRef(new MetricsHistory(300));
  const [version, setVersion] = useState(0);
  const [health, setHealth] = useState<Health | null>(null);
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    const scrape = async (): Promise<void> => {
      try {
        const [h, text] = await Promise.all([props.api.get<Health>('/admin/health'), props.api.get<string>('/metrics')]);
        if (!live) return;
        history.current.add(text, Date.now());
        setHealth(h);
        setError('');
        setVersion((v) => v + 1);
        markInteractive('dx-ready');
      } catch (e) {
        if (live) setError(errorText(e));
      }
    };
    void scrape();
    const t = setInterval(() => void scrape(), POLL_MS);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [props.api]);

  const h = history.current;
  // The chart follows the busiest routes of the public lanes (the console's own /admin polling would crowd them out).
  const publicRoutes = h.routes.filter((r) => !r.route.startsWith('admin/'));
  const top = (publicRoutes.length > 0 ? publicRoutes : h.routes).slice(0, 5).map((r) => r.route);
  const charts: { title: string; unit: string; testid: string; range?: [number, number]; lines: Line[] }[] = [
    {
      title: 'Throughput',
      unit: 'per second',
      testid: 'chart-throughput',
      lines: [
        { label: 'engine commands/s', value: (p) => p.commands_per_s },
        { label: 'HTTP requests/s', value: (p) => p.requests_per_s },
      ],
    },
    {
      title: 'Lag',
      unit: 'ms, seqs, requests',
      testid: 'chart-lag',
      lines: [
        { label: 'engine lag ms', value: (p) => p.engine_lag_ms },
        { label: 'durable lag seqs', value: (p) => p.durable_lag_seqs },
        { label: 'held requests', value: (p) => p.held },
      ],
    },
    {
      title: 'Ring occupancy',
      unit: '% of capacity, fullest ring',
      testid: 'chart-rings',
      range: [0, 100],
      lines: [
        { label: 'command rings %', value: (p) => p.command_ring_pct },
        { label: 'event ring %', value: (p) => p.event_ring_pct },
      ],
    },
    {
      title: 'HTTP p99 latency by route',
      unit: 'ms, bucket upper bound',
      testid: 'chart-latency',
      lines: top.map((route) => ({ label: route, value: (p) => p.p99[route] ?? null })),
    },
  ];
  return (
    <section aria-labelledby="health-title">
      <h2 id="health-title">Health</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {health && (
        <dl class="health" data-testid="health">
          <dt>Engine seq</dt>
          <dd data-testid="engine-seq">{health.seq}</dd>
          <dt>Durable seq</dt>
          <dd>{health.durable_seq}</dd>
          <dt>Durable lag</dt>
          <dd>{String(health.lag)} seqs</dd>
          <dt>Gateways</dt>
          <dd>{health.gateways}</dd>
          <dt>Durability</dt>
          <dd>{String(health.durability ?? '')}</dd>
        </dl>
      )}
      <div class="charts">
        {charts.map((c) => (
          <TimeChart key={c.testid} {...c} history={h} version={version} />
        ))}
      </div>
      <table data-testid="routes">
        <caption>HTTP routes over the last minute (from the latency histograms)</caption>
        <Head cols={['Lane/route', 'Requests/s', 'Mean ms', 'p50 ms ≤', 'p99 ms ≤']} />
        <tbody>
          {h.routes.map((r) => (
            <tr key={r.route}>
              <td>{r.route}</td>
              <td>{r.per_s.toFixed(2)}</td>
              <td>{r.mean_ms.toFixed(2)}</td>
              <td>{r.p50_ms ?? '–'}</td>
              <td>{r.p99_ms ?? '–'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

// ---- series and rounds ---------------------------------------------------------------------

type MarketRow = AdminMarkets['markets'][number];

function closes(r: MarketRow['round'], now: number): string {
  if (r === null) return '–';
  return r.status === 'trading' ? `in ${countdown(r.close_ts, now)}` : clock(r.close_ts);
}

function roundActions(api: AdminApi, m: MarketRow, refresh: () => void) {
  const r = m.round;
  if (r === null) return null;
  const act =
    (name: string, body: unknown = {}) =>
    async (): Promise<string> => {
      const a = await api.call<{ status: string; round_number: string; seq: string }>('POST', `/admin/rounds/${m.market_id}/${name}`, body);
      return `round ${a.round_number} ${a.status} (seq ${a.seq})`;
    };
  const q = (what: string): string => `${what} round ${r.round_number} of market ${m.market_id}?`;
  const out = [];
  if (r.status === 'trading')
    out.push(<Confirmed key="freeze" label="Freeze" question={q('Freeze')} run={act('freeze')} onDone={refresh} />);
  if (r.status === 'frozen') {
    out.push(<Confirmed key="unfreeze" label="Unfreeze" question={q('Unfreeze')} run={act('unfreeze')} onDone={refresh} />);
    out.push(
      <Confirmed
        key="propose"
        label="Propose from oracle"
        question={q('Propose from the oracle price,')}
        run={act('propose')}
        onDone={refresh}
      />,
    );
    out.push(
      <Confirmed key="yes" label="Propose YES" question={q('Propose YES for')} run={act('propose', { outcome: 'yes' })} onDone={refresh} />,
    );
    out.push(
      <Confirmed key="no" label="Propose NO" question={q('Propose NO for')} run={act('propose', { outcome: 'no' })} onDone={refresh} />,
    );
  }
  if (r.status === 'proposed') {
    out.push(
      <Confirmed
        key="settle"
        label="Settle"
        question={q(`Settle (pay out ${r.outcome.toUpperCase()})`)}
        run={act('settle')}
        onDone={refresh}
        danger
      />,
    );
    out.push(<Confirmed key="dispute" label="Dispute" question={q('Dispute')} run={act('dispute')} onDone={refresh} />);
  }
  if (r.status === 'trading' || r.status === 'frozen' || r.status === 'proposed') {
    out.push(<Confirmed key="void" label="Void" question={q('Void (pay 50¢ per share)')} run={act('void')} onDone={refresh} danger />);
  }
  return out;
}

function MarketsPanel(props: { api: AdminApi }) {
  const { data, error, refresh } = usePoll<AdminMarkets>(props.api, '/admin/markets', 1000);
  const now = useNow();
  return (
    <section aria-labelledby="markets-title">
      <h2 id="markets-title">Series and rounds</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <table data-testid="rounds">
        <Head cols={['Market', 'Series', 'Round', 'Status', 'Strike', 'Closes', 'Outcome', 'Actions']} />
        <tbody>
          {(data?.markets ?? []).map((m) => (
            <tr key={m.market_id} data-market-id={m.market_id}>
              <td>
                {m.market_id} · {m.title}
              </td>
              <td>{m.series_period_s > 0 ? `cat ${m.category}, every ${m.series_period_s}s` : '–'}</td>
              <td data-testid="round-number">{m.round?.round_number ?? '–'}</td>
              <td data-testid="round-status">{m.round?.status ?? 'none'}</td>
              <td>{m.round ? oraclePrice(m.round.strike) : '–'}</td>
              <td>{closes(m.round, now)}</td>
              <td>{m.round?.outcome ? m.round.outcome.toUpperCase() : '–'}</td>
              <td class="actions">{roundActions(props.api, m, refresh)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <CreateSeries api={props.api} onDone={refresh} />
    </section>
  );
}

function CreateSeries(props: { api: AdminApi; onDone: () => void }) {
  const [f, setF] = useState({ category: '', title: '', period_s: '300', position_limit: '0', fee_schedule_id: '0' });
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const field = (name: keyof typeof f, label: string, mode: 'numeric' | 'text' = 'numeric') => (
    <span>
      <label for={`series-${name}`}>{label}</label>
      <input id={`series-${name}`} inputMode={mode} required value={f[name]} onInput={(e) => setF({ ...f, [name]: value(e) })} />
    </span>
  );
  const submit = async (ev: Event): Promise<void> => {
    ev.preventDefault();
    setBusy(true);
    try {
      const r = await props.api.call<SeriesCreated>('POST', '/admin/series', {
        category: Number(f.category),
        title: f.title,
        period_s: Number(f.period_s),
        position_limit: Number(f.position_limit),
        fee_schedule_id: Number(f.fee_schedule_id),
      });
      setMsg({
        ok: true,
        text: `series created: market ${r.market_id}, round ${r.round_number === '0' ? 'waits for the oracle' : r.round_number}`,
      });
      props.onDone();
    } catch (e) {
      setMsg({ ok: false, text: errorText(e) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <details>
      <summary>Create a series</summary>
      <form onSubmit={submit} class="series-form">
        {field('category', 'Category (0–65535)')}
        {field('title', 'Title', 'text')}
        {field('period_s', 'Round length (s)')}
        {field('position_limit', 'Position limit (0 = none)')}
        {field('fee_schedule_id', 'Fee schedule id (0 = no fees)')}
        <button type="submit" disabled={busy}>
          Create series
        </button>
      </form>
      {msg && (
        <p role={msg.ok ? 'status' : 'alert'} class={msg.ok ? 'ok' : 'error'}>
          {msg.text}
        </p>
      )}
    </details>
  );
}

// ---- oracle --------------------------------------------------------------------------------

function OraclePanel(props: { api: AdminApi }) {
  const { data, error } = usePoll<AdminOracle>(props.api, '/admin/oracle', 1000);
  const now = useNow();
  return (
    <section aria-labelledby="oracle-title">
      <h2 id="oracle-title">Oracle</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {data && (
        <>
          <dl>
            <dt>Reference</dt>
            <dd data-testid="oracle-reference">{oraclePrice(data.price)}</dd>
            <dt>Fresh sources</dt>
            <dd>
              {data.fresh_source_count} (quorum {data.quorum}, stale after {data.staleness_ms / 1000}s)
            </dd>
          </dl>
          <table data-testid="oracle-sources">
            <Head cols={['Source', 'Last price', 'Last tick', 'Freshness']} />
            <tbody>
              {data.sources.map((s) => (
                <tr key={s.source_id}>
                  <td>{s.source_id}</td>
                  <td>{oraclePrice(s.price)}</td>
                  <td>{Math.max(0, Math.round((now - Number(BigInt(s.ts) / 1_000_000n)) / 1000))}s ago</td>
                  <td class={s.fresh ? 'ok' : 'error'}>{s.fresh ? 'fresh' : 'stale'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {data.sources.length === 0 && <p class="muted">No source has ticked.</p>}
        </>
      )}
    </section>
  );
}

// ---- withdrawals ---------------------------------------------------------------------------

function WithdrawalsPanel(props: { api: AdminApi }) {
  const { data, error, refresh } = usePoll<PendingWithdrawals>(props.api, '/admin/withdrawals', 2000);
  const finish = (wid: string, how: 'confirm' | 'fail') => async (): Promise<string> => {
    const r = await props.api.call<{ status: string; seq: string }>('POST', `/admin/withdrawals/${wid}/${how}`, {});
    return `withdrawal ${wid} ${r.status}`;
  };
  return (
    <section aria-labelledby="withdrawals-title">
      <h2 id="withdrawals-title">Pending withdrawals</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <table data-testid="withdrawals">
        <Head cols={['Id', 'Account', 'Amount', 'Destination', 'Actions']} />
        <tbody>
          {(data?.withdrawals ?? []).map((w) => (
            <tr key={w.wid} data-wid={w.wid}>
              <td>{w.wid}</td>
              <td>{w.account_id}</td>
              <td>{dollars(w.amount ?? '0')}</td>
              <td>{w.destination}</td>
              <td class="actions">
                <Confirmed
                  label="Confirm"
                  question={`Send ${dollars(w.amount ?? '0')} to ${w.destination}?`}
                  run={finish(w.wid, 'confirm')}
                  onDone={refresh}
                  danger
                />
                <Confirmed
                  label="Fail"
                  question={`Fail withdrawal ${w.wid} (the money returns)?`}
                  run={finish(w.wid, 'fail')}
                  onDone={refresh}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {data !== null && data.withdrawals.length === 0 && <p class="muted">None pending.</p>}
    </section>
  );
}

// ---- money and fees ------------------------------------------------------------------------

function MoneyPanel(props: { api: AdminApi }) {
  const { data, error } = usePoll<Ledger>(props.api, '/admin/ledger', 2000);
  return (
    <section aria-labelledby="money-title">
      <h2 id="money-title">Money</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {data && (
        <dl data-testid="ledger" data-seq={data.as_of_seq}>
          <dt>Deposited</dt>
          <dd data-field="deposits">{dollars(data.deposits)}</dd>
          <dt>Withdrawn</dt>
          <dd data-field="withdrawn">{dollars(data.withdrawn)}</dd>
          <dt>In accounts</dt>
          <dd data-field="accounts">
            {dollars(data.available)} free, {dollars(data.reserved)} reserved ({dollars(data.withdrawals_pending)} for pending withdrawals)
          </dd>
          <dt>Collateral</dt>
          <dd data-field="collateral">
            {dollars(data.collateral)} ({data.open_pairs} open pairs)
          </dd>
          <dt>Fees collected</dt>
          <dd data-field="fees_collected">{dollars(data.fees_collected)}</dd>
          <dt>Adds up</dt>
          <dd data-field="balanced" class={data.balanced ? 'ok' : 'error'}>
            {data.balanced ? 'yes' : 'NO: accounts + collateral + fees differ from deposits - withdrawn'}
          </dd>
        </dl>
      )}
    </section>
  );
}

function FeesPanel(props: { api: AdminApi }) {
  const { data, error } = usePoll<FeeSchedules>(props.api, '/admin/fee_schedules', 5000);
  return (
    <section aria-labelledby="fees-title">
      <h2 id="fees-title">Fee schedules</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <table data-testid="fee-schedules">
        <Head cols={['Id', 'Taker', 'Maker']} />
        <tbody>
          {(data?.fee_schedules ?? []).map((f) => (
            <tr key={f.fee_schedule_id} data-fee-schedule-id={f.fee_schedule_id}>
              <td>{f.fee_schedule_id}</td>
              <td>{f.taker_bps} bps</td>
              <td>{f.maker_bps} bps</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data !== null && data.fee_schedules.length === 0 && <p class="muted">None: every market trades without fees.</p>}
    </section>
  );
}

// ---- accounts and keys ---------------------------------------------------------------------

/**
 * The console's deposits. Deposits are idempotent by (account, ref): one sent with an earlier ref credits nothing, so
 * each deposit has a ref of its own, except after an unknown outcome (a 504, a lost answer, or a retry of one refused
 * before the engine looked at it): depositing the same amount to the same account again reuses that ref, and the
 * deposit lands once.
 */
class ConsoleDeposits {
  private held: { key: string; ref: string } | null = null;

  async deposit(api: AdminApi, account: number, amount: string): Promise<{ seq: string }> {
    const key = `${account}:${amount}`;
    const again = this.held?.key === key;
    const ref = again ? this.held!.ref : `console-${newClientOrderId()}`;
    try {
      const r = await api.call<{ seq: string }>('POST', `/admin/accounts/${account}/deposits`, { amount, ref });
      this.held = null;
      return r;
    } catch (e) {
      this.held = outcomeUnknown(e, again) ? { key, ref } : null;
      throw e;
    }
  }
}

function AccountsPanel(props: { api: AdminApi }) {
  const { api } = props;
  const [accountId, setAccountId] = useState('');
  const [account, setAccount] = useState<AdminAccount | null>(null);
  const [error, setError] = useState('');
  const [scopes, setScopes] = useState({ read: true, trade: true, withdraw: false });
  const [created, setCreated] = useState<AdminKeyCreated | null>(null);
  const [amount, setAmount] = useState('');
  const deposits = useRef(new ConsoleDeposits());

  const load = async (id = accountId): Promise<void> => {
    try {
      setAccount(await api.get<AdminAccount>(`/admin/accounts/${encodeURIComponent(id.trim())}`));
      setError('');
    } catch (e) {
      setAccount(null);
      setError(e instanceof ApiError && e.code === 'unknown_account' ? `no account ${id}` : errorText(e));
    }
  };
  const show = (ev: Event): void => {
    ev.preventDefault();
    setCreated(null);
    void load();
  };
  const newAccount = async (): Promise<string> => {
    const r = await api.call<{ account_id: number }>('POST', '/admin/accounts', {});
    setAccountId(String(r.account_id));
    setCreated(null);
    await load(String(r.account_id));
    return `account ${r.account_id} created`;
  };
  const id = account?.account_id;
  return (
    <section aria-labelledby="accounts-title">
      <h2 id="accounts-title">Accounts and keys</h2>
      <div class="actions">
        <form onSubmit={show} class="inline">
          <label for="account-id">Account id</label>
          <input id="account-id" inputMode="numeric" class="narrow" required value={accountId} onInput={(e) => setAccountId(value(e))} />
          <button type="submit">Show</button>
        </form>
        <Confirmed label="Create account" question="Create a new account?" run={newAccount} />
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {account && id !== undefined && (
        <div data-testid="account">
          <dl>
            <dt>Account</dt>
            <dd>
              {id}
              {account.deleted ? ' (deleted)' : ''}
            </dd>
            <dt>Available</dt>
            <dd>{dollars(account.available ?? '0')}</dd>
            <dt>Reserved</dt>
            <dd>{dollars(account.reserved ?? '0')}</dd>
            <dt>Positions</dt>
            <dd>
              {(account.positions ?? [])
                .map((p) => `market ${p.market_id} ${p.outcome.toUpperCase()} ${p.free}+${p.reserved_for_sale}`)
                .join('; ') || 'none'}
            </dd>
          </dl>
          <form class="inline" onSubmit={(ev) => ev.preventDefault()}>
            <label for="deposit-amount">Deposit (¢)</label>
            <input id="deposit-amount" inputMode="numeric" class="narrow" value={amount} onInput={(e) => setAmount(value(e))} />
            <Confirmed
              label="Deposit"
              question={`Credit ${amount || '?'}¢ to account ${id}?`}
              run={async () => {
                const r = await deposits.current.deposit(api, id, amount.trim());
                await load(String(id));
                return `deposited (seq ${r.seq})`;
              }}
            />
          </form>
          <table data-testid="keys">
            <caption>Keys (secrets are never shown again after creation)</caption>
            <Head cols={['Key', 'Scopes', 'State', 'Actions']} />
            <tbody>
              {(account.keys ?? []).map((k) => (
                <tr key={k.key_id} data-key-id={k.key_id}>
                  <td>{k.key_id}</td>
                  <td>{k.scopes.join(', ')}</td>
                  <td>{k.revoked ? 'revoked' : 'live'}</td>
                  <td>
                    {!k.revoked && (
                      <Confirmed
                        label="Revoke"
                        question={`Revoke key ${k.key_id} (its sessions close at once)?`}
                        danger
                        run={async () => {
                          await api.call('DELETE', `/admin/keys/${k.key_id}`);
                          await load(String(id));
                          return `key ${k.key_id} revoked`;
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <fieldset>
            <legend>New key scopes</legend>
            {(['read', 'trade', 'withdraw'] as const).map((s) => (
              <label key={s} class="check">
                <input type="checkbox" checked={scopes[s]} onChange={(e) => setScopes({ ...scopes, [s]: checked(e) })} />
                {s}
              </label>
            ))}
          </fieldset>
          <Confirmed
            label="Create key"
            question={`Create a key with ${
              Object.entries(scopes)
                .filter(([, v]) => v)
                .map(([k]) => k)
                .join(', ') || 'no scope'
            } for account ${id}?`}
            run={async () => {
              const k = await api.call<AdminKeyCreated>('POST', `/admin/accounts/${id}/keys`, {
                scopes: Object.entries(scopes)
                  .filter(([, v]) => v)
                  .map(([k2]) => k2),
              });
              setCreated(k);
              await load(String(id));
              return `key ${k.key_id} created`;
            }}
          />
          {created && (
            <p role="status">
              Key {created.key_id}, secret (copy it now, it is not shown again):{' '}
              <span class="secret" data-testid="new-secret">
                {created.secret}
              </span>
            </p>
          )}
        </div>
      )}
    </section>
  );
}
