// orders: the order ticket (the placement's outcome shown as the API
// returns it, rejects with their code and message), the open orders with
// cancel and decrease, positions and fills. Browser main thread.

import { useState } from 'preact/hooks';
import type { OrderRequest, Placement } from '../../client/types.js';
import { ApiError, errorText, newClientOrderId, outcomeUnknown } from '../lib/api.js';
import { clock, dollars } from '../lib/format.js';
import type { OpenOrder, TraderStore } from './store.js';
import { Head, value, checked } from '../lib/ui.js';

function placementText(p: Placement): string {
  const head = `order ${p.order_id} ${p.status}${p.reason ? ` (${p.reason})` : ''}: filled ${p.filled_qty}, resting ${p.resting_qty}`;
  const fills = p.fills.map((f) => `${f.qty} @ ${f.tick_yes}¢ YES (${f.path})`).join(', ');
  return fills ? `${head}; fills ${fills}` : head;
}

/** The ticket's fields as typed. */
interface TicketForm {
  marketId: number;
  side: 'buy' | 'sell';
  outcome: 'yes' | 'no';
  tick: string;
  qty: string;
  tif: 'gtc' | 'ioc' | 'fok' | 'gtd';
  expiryS: string;
  postOnly: boolean;
  maxCost: string;
}

function ticketRequest(f: TicketForm, clientOrderId: string): OrderRequest {
  const req: OrderRequest = {
    market_id: f.marketId, side: f.side, outcome: f.outcome, tick: Number(f.tick), qty: Number(f.qty), tif: f.tif,
    client_order_id: clientOrderId,
  };
  if (f.postOnly) req.post_only = true;
  if (f.tif === 'gtd') req.expiry_ts = String(BigInt(Date.now() + Number(f.expiryS) * 1000) * 1_000_000n);
  if (f.maxCost !== '') req.max_cost = f.maxCost;
  return req;
}

/**
 * Places an order and says what its answer means. A 504 or a lost answer
 * leaves the outcome unknown: the ticket then sends the same form again with
 * the same client_order_id, and a 409 duplicate names the order the first
 * try made (`again`).
 */
async function place(store: TraderStore, req: OrderRequest, again: boolean): Promise<{ ok: boolean; text: string; unknown: boolean }> {
  try {
    return { ok: true, text: placementText(await store.api.call<Placement>('POST', '/v1/portfolio/orders', req)), unknown: false };
  } catch (e) {
    if (again && e instanceof ApiError && e.code === 'duplicate_client_order_id') {
      const d = e.envelope.details as { order_id?: string; status?: string } | null;
      return { ok: d?.status !== 'rejected', text: `the first try made order ${d?.order_id} (${d?.status})`, unknown: false };
    }
    if (outcomeUnknown(e, again)) {
      const text = `${errorText(e)}. Placing the same order again is safe: it carries the same client_order_id ${req.client_order_id}.`;
      return { ok: false, text, unknown: true };
    }
    return { ok: false, text: errorText(e), unknown: false };
  }
}

export function Ticket(props: { store: TraderStore; marketId: number }) {
  const [side, setSide] = useState<'buy' | 'sell'>('buy');
  const [outcome, setOutcome] = useState<'yes' | 'no'>('yes');
  const [tick, setTick] = useState('50');
  const [qty, setQty] = useState('10');
  const [tif, setTif] = useState<'gtc' | 'ioc' | 'fok' | 'gtd'>('gtc');
  const [expiryS, setExpiryS] = useState('60');
  const [postOnly, setPostOnly] = useState(false);
  const [maxCost, setMaxCost] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  /** The order whose outcome is unknown (a 504, a lost answer): placing the same form again reuses its client_order_id. */
  const [unknown, setUnknown] = useState<{ form: string; id: string } | null>(null);

  const submit = async (ev: Event): Promise<void> => {
    ev.preventDefault();
    const f: TicketForm = { marketId: props.marketId, side, outcome, tick, qty, tif, expiryS, postOnly, maxCost: maxCost.trim() };
    const form = JSON.stringify(f);
    const again = unknown !== null && unknown.form === form;
    const id = again ? unknown.id : newClientOrderId();
    setBusy(true);
    const r = await place(props.store, ticketRequest(f, id), again).finally(() => setBusy(false));
    setUnknown(r.unknown ? { form, id } : null);
    setResult(r);
  };

  return (
    <section class="ticket" aria-label="order ticket">
      <h3>Order ticket</h3>
      <form onSubmit={submit}>
        <fieldset>
          <legend>Side</legend>
          <label class="check">
            <input type="radio" name="side" value="buy" checked={side === 'buy'} onChange={() => setSide('buy')} />
            Buy
          </label>
          <label class="check">
            <input type="radio" name="side" value="sell" checked={side === 'sell'} onChange={() => setSide('sell')} />
            Sell
          </label>
        </fieldset>
        <fieldset>
          <legend>Outcome</legend>
          <label class="check">
            <input type="radio" name="outcome" value="yes" checked={outcome === 'yes'} onChange={() => setOutcome('yes')} />
            YES
          </label>
          <label class="check">
            <input type="radio" name="outcome" value="no" checked={outcome === 'no'} onChange={() => setOutcome('no')} />
            NO
          </label>
        </fieldset>
        <label for="ticket-tick">Price (¢, 1–99, in the {outcome.toUpperCase()} space)</label>
        <input id="ticket-tick" type="number" min={1} max={99} step={1} required value={tick} onInput={(e) => setTick(value(e))} />
        <label for="ticket-qty">Shares</label>
        <input id="ticket-qty" type="number" min={1} step={1} required value={qty} onInput={(e) => setQty(value(e))} />
        <label for="ticket-tif">Time in force</label>
        <select id="ticket-tif" value={tif} onChange={(e) => setTif(value(e) as typeof tif)}>
          <option value="gtc">GTC: good till canceled</option>
          <option value="ioc">IOC: immediate or cancel</option>
          <option value="fok">FOK: fill or kill</option>
          <option value="gtd">GTD: good till a time</option>
        </select>
        {tif === 'gtd' && (
          <>
            <label for="ticket-expiry">Expires in (seconds)</label>
            <input id="ticket-expiry" type="number" min={1} step={1} value={expiryS} onInput={(e) => setExpiryS(value(e))} />
          </>
        )}
        <label class="check">
          <input type="checkbox" checked={postOnly} onChange={(e) => setPostOnly(checked(e))} />
          Post-only (never take)
        </label>
        <label for="ticket-max-cost">Max cost (¢, buys only; optional: fills at once, never rests)</label>
        <input id="ticket-max-cost" inputMode="numeric" value={maxCost} onInput={(e) => setMaxCost(value(e))} />
        <button type="submit" disabled={busy}>
          {busy ? 'Placing…' : `${side === 'buy' ? 'Buy' : 'Sell'} ${outcome.toUpperCase()}`}
        </button>
      </form>
      <div aria-live="polite" data-testid="ticket-result">
        {result !== null && (
          <p class={result.ok ? 'ok' : 'error'} role={result.ok ? 'status' : 'alert'}>
            {result.text}
          </p>
        )}
      </div>
    </section>
  );
}

/**
 * One request of an order row at a time: a double click sends one (a second would be refused unknown_order and replace
 * the answer). `run` shows the text act resolves to, or the error's.
 */
function useRowRequest(): { busy: boolean; msg: string; run: (act: () => Promise<string>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const [msg, setMsg] = useState('');
  const run = async (act: () => Promise<string>): Promise<void> => {
    if (busy) return; // Enter in the quantity field submits without the (disabled) button
    setBusy(true);
    try {
      setMsg(await act());
    } catch (e) {
      setMsg(errorText(e));
    } finally {
      setBusy(false);
    }
  };
  return { busy, msg, run };
}

function OrderRow(props: { store: TraderStore; o: OpenOrder }) {
  const { o, store } = props;
  const [newQty, setNewQty] = useState(String(Math.max(0, o.remaining_qty - 1)));
  const { busy, msg, run } = useRowRequest();
  const cancel = (): Promise<void> =>
    run(async () => {
      const r = await store.api.call<{
        results: ({ status: string; canceled_qty: number } | { error: { code: string; message: string } })[];
      }>('DELETE', '/v1/portfolio/orders/batch', { order_ids: [o.order_id] });
      const item = r.results[0]!;
      return 'error' in item ? `${item.error.code}: ${item.error.message}` : `canceled ${item.canceled_qty}`;
    });
  const decrease = (ev: Event): Promise<void> => {
    ev.preventDefault();
    return run(async () => {
      const r = await store.api.call<{ new_qty: number }>('POST', `/v1/portfolio/orders/${o.order_id}/decrease`, {
        new_qty: Number(newQty),
      });
      return `now ${r.new_qty}`;
    });
  };
  return (
    <tr data-order-id={o.order_id} data-remaining={o.remaining_qty}>
      <td>{o.order_id}</td>
      <td>{o.market_id}</td>
      <td>{o.side}</td>
      <td>{o.outcome.toUpperCase()}</td>
      <td>{o.tick}¢</td>
      <td>{o.qty}</td>
      <td>{o.filled_qty}</td>
      <td data-testid="remaining">{o.remaining_qty}</td>
      <td>
        {o.tif}
        {o.post_only ? ', post-only' : ''}
      </td>
      <td class="actions">
        <form onSubmit={decrease} class="inline">
          <label for={`dec-${o.order_id}`} class="visually-hidden">
            New quantity for order {o.order_id}
          </label>
          <input
            id={`dec-${o.order_id}`}
            type="number"
            min={0}
            step={1}
            value={newQty}
            class="narrow"
            onInput={(e) => setNewQty(value(e))}
          />
          <button type="submit" aria-label={`Decrease order ${o.order_id}`} disabled={busy}>
            Decrease
          </button>
        </form>
        <button type="button" aria-label={`Cancel order ${o.order_id}`} disabled={busy} onClick={() => void cancel()}>
          Cancel
        </button>
        {msg && (
          <span role="status" class="muted">
            {' '}
            {msg}
          </span>
        )}
      </td>
    </tr>
  );
}

export function OpenOrders(props: { store: TraderStore }) {
  const orders = [...props.store.orders.values()].sort((a, b) => (BigInt(b.order_id) > BigInt(a.order_id) ? 1 : -1));
  return (
    <section aria-label="open orders">
      <h3>Open orders</h3>
      <table data-testid="open-orders">
        <Head cols={['Order', 'Market', 'Side', 'Outcome', 'Price', 'Qty', 'Filled', 'Remaining', 'TIF', 'Actions']} />
        <tbody>
          {orders.map((o) => (
            <OrderRow key={o.order_id} store={props.store} o={o} />
          ))}
        </tbody>
      </table>
      {orders.length === 0 && <p class="muted">No open orders.</p>}
    </section>
  );
}

export function Positions(props: { store: TraderStore }) {
  const list = [...props.store.positions.values()].sort((a, b) => a.market_id - b.market_id || a.outcome.localeCompare(b.outcome));
  return (
    <section aria-label="positions">
      <h3>Positions</h3>
      <table data-testid="positions">
        <Head cols={['Market', 'Outcome', 'Free', 'Reserved for sale']} />
        <tbody>
          {list.map((p) => (
            <tr key={`${p.market_id}:${p.outcome}`}>
              <td>{p.market_id}</td>
              <td>{p.outcome.toUpperCase()}</td>
              <td>{p.free}</td>
              <td>{p.reserved_for_sale}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.length === 0 && <p class="muted">No positions.</p>}
    </section>
  );
}

export function Fills(props: { store: TraderStore }) {
  return (
    <section aria-label="fills">
      <h3>Fills</h3>
      <table data-testid="fills">
        <Head cols={['Time', 'Order', 'Market', 'Side', 'Price', 'Qty', 'Role', 'Fee']} />
        <tbody>
          {props.store.fills.map((f) => (
            <tr key={`${f.fill_id}:${f.order_id}`} data-order-id={f.order_id}>
              <td>{clock(f.ts)}</td>
              <td>{f.order_id}</td>
              <td>{f.market_id}</td>
              <td>
                {f.side} {f.outcome.toUpperCase()}
              </td>
              <td>{f.tick}¢</td>
              <td>{f.qty}</td>
              <td>{f.role}</td>
              <td>{dollars(f.fee)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.store.fills.length === 0 && <p class="muted">No fills yet.</p>}
    </section>
  );
}
