// market: the selected market's round and oracle, its two bid ladders (own
// orders marked), the trade tape and the price chart (candles from GET
// .../candlesticks, then folded live from the trades stream). Browser main
// thread.

import { CandlestickSeries, ColorType, createChart, type IChartApi, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Candle, CandlePeriod, Candlesticks } from '../../client/types.js';
import { errorText } from '../lib/api.js';
import { clock, countdown, oraclePrice } from '../lib/format.js';
import type { TapeItem, TraderStore } from './store.js';
import { Head } from '../lib/ui.js';

export function RoundPanel(props: { store: TraderStore; now: number }) {
  const { round, oracle } = props.store;
  return (
    <section class="round" aria-label="round and oracle">
      {round === null ? (
        <p>No round yet.</p>
      ) : (
        <dl>
          <dt>Round</dt>
          <dd data-testid="round-number">{round.round_number}</dd>
          <dt>Status</dt>
          <dd data-testid="round-status">{round.status}</dd>
          <dt>Strike</dt>
          <dd>{oraclePrice(round.strike)}</dd>
          <dt>{round.status === 'trading' ? 'Closes in' : 'Closed'}</dt>
          <dd data-testid="round-countdown">{round.status === 'trading' ? countdown(round.close_ts, props.now) : clock(round.close_ts)}</dd>
          {round.outcome !== '' && (
            <>
              <dt>Outcome</dt>
              <dd data-testid="round-outcome">
                {round.outcome.toUpperCase()} at {oraclePrice(round.settle_price)}
              </dd>
            </>
          )}
        </dl>
      )}
      <dl>
        <dt>Oracle</dt>
        <dd data-testid="oracle-price">{oraclePrice(oracle.price)}</dd>
        <dt>Fresh sources</dt>
        <dd>{oracle.fresh_source_count}</dd>
      </dl>
    </section>
  );
}

function Ladder(props: { store: TraderStore; side: 'yes' | 'no' }) {
  const book = props.store.book!;
  const levels = book.levels(props.side);
  const own = props.store.ownOnLadder(props.side);
  const max = Math.max(1, ...levels.map((l) => l[1]));
  const caption = props.side === 'yes' ? 'YES bids' : 'NO bids';
  return (
    <table class={`ladder ladder-${props.side}`} data-testid={`ladder-${props.side}`}>
      <caption>
        {caption}
        {props.side === 'no' && <span class="muted"> (a NO bid at t is a YES ask at 100 − t)</span>}
      </caption>
      <Head cols={['Price', 'Shares', 'Yours']} />
      <tbody>
        {levels.map(([tick, qty]) => (
          <tr key={tick} data-tick={tick} data-qty={qty} class={own.has(tick) ? 'own' : ''}>
            <td>{tick}¢</td>
            <td class="depth">
              <span class="bar" style={{ width: `${Math.round((qty / max) * 100)}%` }} />
              {qty}
            </td>
            <td>{own.has(tick) ? <span aria-label={`${own.get(tick)} of them yours`}>● {own.get(tick)}</span> : ''}</td>
          </tr>
        ))}
        {levels.length === 0 && (
          <tr>
            <td colSpan={3} class="muted">
              no bids
            </td>
          </tr>
        )}
      </tbody>
    </table>
  );
}

export function Ladders(props: { store: TraderStore }) {
  const book = props.store.book!;
  return (
    <section class="ladders" aria-label="order book">
      <h3>Order book</h3>
      {book.loaded ? (
        <>
          <div class="pair">
            <Ladder store={props.store} side="yes" />
            <Ladder store={props.store} side="no" />
          </div>
          <p class="muted" data-testid="book-seq" data-seq={book.asOfSeq}>
            as of seq {book.asOfSeq}
          </p>
        </>
      ) : (
        <p>Loading the book…</p>
      )}
    </section>
  );
}

export function Tape(props: { store: TraderStore }) {
  return (
    <section class="tape" aria-label="trades">
      <h3>Trades</h3>
      <table data-testid="tape">
        <Head cols={['Time', 'YES price', 'Shares', 'Taker']} />
        <tbody>
          {props.store.tape.map((t, i) => (
            <tr key={`${t.seq}-${i}`}>
              <td>{clock(t.ts)}</td>
              <td>{t.tick_yes}¢</td>
              <td>{t.qty}</td>
              <td>
                {t.taker_side} {t.taker_outcome}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.store.tape.length === 0 && <p class="muted">No trades yet.</p>}
    </section>
  );
}

const PERIOD_S: Record<CandlePeriod, number> = { '1m': 60, '5m': 300, '1h': 3600, '1d': 86400 };

interface Bar {
  time: UTCTimestamp;
  open: number;
  high: number;
  low: number;
  close: number;
}

function bar(c: Candle): Bar {
  return { time: Number(BigInt(c.start_ts) / 1_000_000_000n) as UTCTimestamp, open: c.open, high: c.high, low: c.low, close: c.close };
}

/** Candles of the YES price: GET .../candlesticks once, then every trade folded into the last (or a new) candle. */
export function PriceChart(props: { store: TraderStore; marketId: number }) {
  const holder = useRef<HTMLDivElement>(null);
  const [period, setPeriod] = useState<CandlePeriod>('1m');
  const [status, setStatus] = useState('');
  const chart = useRef<{ chart: IChartApi; series: ISeriesApi<'Candlestick'> } | null>(null);
  const roundNumber = props.store.round?.round_number ?? '';
  const openTs = props.store.round?.open_ts ?? '';

  useEffect(() => {
    const c = createChart(holder.current!, {
      autoSize: true,
      // The logo would inject a <style> element, which the page's CSP refuses: the attribution is in the caption instead.
      layout: { background: { type: ColorType.Solid, color: 'transparent' }, textColor: '#c9d1d9', attributionLogo: false },
      grid: { vertLines: { color: '#21262d' }, horzLines: { color: '#21262d' } },
      timeScale: { timeVisible: true, secondsVisible: false },
      rightPriceScale: { scaleMargins: { top: 0.1, bottom: 0.1 } },
    });
    const series = c.addSeries(CandlestickSeries, {
      upColor: '#3fb950',
      downColor: '#f85149',
      wickUpColor: '#3fb950',
      wickDownColor: '#f85149',
      borderVisible: false,
      priceFormat: { type: 'price', precision: 0, minMove: 1 },
    });
    chart.current = { chart: c, series };
    return () => {
      chart.current = null;
      c.remove();
    };
  }, []);

  useEffect(() => {
    const store = props.store;
    const c = chart.current!;
    const periodS = PERIOD_S[period];
    let last: Bar | null = null;
    let asOf: bigint | null = null;
    const early: TapeItem[] = [];
    let live = true;
    let bars = 0;
    // The chart draws on a canvas: its candle count and last close are also
    // kept on the element, for the tests and for anyone inspecting the page.
    const note = (): void => {
      const el = holder.current;
      if (el === null) return;
      el.dataset.bars = String(bars);
      el.dataset.close = last === null ? '' : String(last.close);
    };
    const fold = (t: TapeItem): void => {
      const time = (Math.floor(Number(BigInt(t.ts) / 1_000_000_000n) / periodS) * periodS) as UTCTimestamp;
      const p = t.tick_yes;
      if (last !== null && last.time === time) {
        last = { ...last, high: Math.max(last.high, p), low: Math.min(last.low, p), close: p };
      } else if (last === null || time > last.time) {
        last = { time, open: p, high: p, low: p, close: p };
        bars++;
      } else {
        return; // older than the chart's last candle (already in it)
      }
      c.series.update(last);
      note();
    };
    store.onTrade = (t) => {
      if (asOf === null) early.push(t);
      else if (BigInt(t.seq) > asOf) fold(t);
    };
    c.series.setData([]);
    note();
    // This round's candles (the tape spans rounds, and each round is a new contract).
    const start = openTs !== '' ? `&start_ts=${openTs}` : '';
    setStatus('loading');
    store.api.get<Candlesticks>(`/v1/markets/${props.marketId}/candlesticks?period=${period}${start}`).then(
      (r) => {
        if (!live) return;
        const data = r.candles.map(bar);
        c.series.setData(data);
        last = data[data.length - 1] ?? null;
        bars = data.length;
        note();
        asOf = BigInt(r.as_of_seq);
        for (const t of early) if (BigInt(t.seq) > asOf) fold(t);
        early.length = 0;
        c.chart.timeScale().fitContent();
        setStatus(r.truncated ? 'older trades were evicted from the tape' : '');
      },
      (e) => live && setStatus(errorText(e)),
    );
    return () => {
      live = false;
      if (store.onTrade !== null) store.onTrade = null;
    };
  }, [props.marketId, period, roundNumber, props.store.reconnects]);

  return (
    <section class="chart" aria-label="price chart">
      <h3>YES price</h3>
      <div role="radiogroup" aria-label="candle period" class="periods">
        {(['1m', '5m'] as const).map((p) => (
          <label key={p} class="check">
            <input type="radio" name="period" value={p} checked={period === p} onChange={() => setPeriod(p)} />
            {p}
          </label>
        ))}
      </div>
      <figure>
        <div
          ref={holder}
          class="chart-box"
          data-testid="chart"
          role="img"
          aria-label={`candlestick chart of the YES price, ${period} candles`}
        />
        <figcaption class="muted">
          {status && status !== 'loading' && <>{status}. </>}
          Chart: TradingView Lightweight Charts™, Copyright © TradingView, Inc.,{' '}
          <a href="https://www.tradingview.com/" target="_blank" rel="noopener noreferrer">
            tradingview.com
          </a>
        </figcaption>
      </figure>
    </section>
  );
}
