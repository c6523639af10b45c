// app: the trader page. Sign-in (key id and secret, kept in memory, or in
// sessionStorage when "remember for this tab" is ticked), then the markets,
// the selected market (round, ladders, chart, tape, ticket) and the account
// (open orders, positions, fills, balance). Browser main thread.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, SignedApi, errorText } from '../lib/api.js';
import { countdown, dollars } from '../lib/format.js';
import { markInteractive, useNow, useRememberedSession, useVersion } from '../lib/hooks.js';
import { SignInPage, SigningIn } from '../lib/signin.js';
import { Ladders, PriceChart, RoundPanel, Tape } from './market.js';
import { Fills, OpenOrders, Positions, Ticket } from './orders.js';
import { TraderStore } from './store.js';
import { Head, value } from '../lib/ui.js';

const REMEMBER_KEY = 'dx-trader-key';

interface Credentials {
  keyId: string;
  secret: string;
}

/** Signs in: checks the key with a signed read (401 and 403 come back as the API says them). */
async function signIn(c: Credentials): Promise<TraderStore> {
  const api = await SignedApi.create(c.keyId, c.secret);
  const limits = await api.get<{ scopes: string[] }>('/v1/account/limits');
  if (!limits.scopes.includes('read')) throw new Error('this key has no read scope: the page needs read (and trade to place orders)');
  return new TraderStore(api);
}

export function App() {
  const s = useRememberedSession(REMEMBER_KEY, (saved) => signIn(JSON.parse(saved) as Credentials));
  if (s.session !== null) {
    const store = s.session;
    return (
      <Dashboard
        store={store}
        onSignOut={() => {
          store.stop();
          s.signOut();
        }}
      />
    );
  }
  if (!s.ready) return <SigningIn />;
  return <SignIn error={s.error} onSignedIn={(store, c, remember) => s.signedIn(store, remember ? JSON.stringify(c) : null)} />;
}

function SignIn(props: { error: string; onSignedIn: (s: TraderStore, c: Credentials, remember: boolean) => void }) {
  const [keyId, setKeyId] = useState('');
  const [secret, setSecret] = useState('');
  return (
    <SignInPage
      title="dx trader"
      intro="Sign in with an API key. The secret stays in this page: requests are signed here and only signatures are sent."
      rememberNote="Remember for this tab (sessionStorage, gone when the tab closes)"
      error={props.error}
      submit={async (remember) => props.onSignedIn(await signIn({ keyId, secret }), { keyId, secret }, remember)}
      explain={(e) =>
        e instanceof ApiError && e.status === 401
          ? `${errorText(e)}. Check the key id and the secret (and that this computer's clock is right: signatures are valid for 5 s).`
          : errorText(e)
      }
    >
      <label for="key-id">Key id</label>
      <input id="key-id" inputMode="numeric" autoComplete="username" required value={keyId} onInput={(e) => setKeyId(value(e))} />
      <label for="key-secret">Secret (base64)</label>
      <input id="key-secret" type="password" autoComplete="current-password" required value={secret} onInput={(e) => setSecret(value(e))} />
    </SignInPage>
  );
}

function Dashboard(props: { store: TraderStore; onSignOut: () => void }) {
  const { store } = props;
  useVersion(store);
  const now = useNow();
  useEffect(() => {
    store.start().catch((e) => store.fail(e));
    return () => store.stop();
  }, [store]);
  useEffect(() => {
    if (store.book?.loaded) markInteractive('dx-ready');
  });
  const market = useMemo(() => store.markets.find((m) => m.market_id === store.selected) ?? null, [store.version]);

  return (
    <div class="layout">
      <header class="top">
        <h1>dx trader</h1>
        <span class={`conn conn-${store.connection}`} role="status" aria-label={`live data: ${store.connection}`}>
          ● {store.connection}
        </span>
        <dl class="balance" aria-label="balance">
          <dt>Available</dt>
          <dd data-testid="balance-available">{store.balance ? dollars(store.balance.available) : '…'}</dd>
          <dt>Reserved</dt>
          <dd data-testid="balance-reserved">{store.balance ? dollars(store.balance.reserved) : '…'}</dd>
        </dl>
        <span class="key">key {store.api.keyId}</span>
        <button type="button" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      {store.notice && (
        <p class="error" role="alert">
          {store.notice}{' '}
          <button
            type="button"
            class="link"
            onClick={() => {
              store.notice = '';
              store.changed();
            }}
          >
            dismiss
          </button>
        </p>
      )}
      <nav aria-label="markets" class="markets">
        <h2>Markets</h2>
        <table>
          <Head cols={['Market', 'Status', 'Bid', 'Ask', 'Last', 'Closes in']} />
          <tbody>
            {store.markets.map((m) => (
              <tr key={m.market_id} class={m.market_id === store.selected ? 'selected' : ''} data-testid={`market-${m.market_id}`}>
                <td>
                  <button
                    type="button"
                    class="link"
                    aria-current={m.market_id === store.selected ? 'true' : undefined}
                    onClick={() => store.select(m.market_id)}
                  >
                    {m.market_id} · {m.title}
                  </button>
                </td>
                <td data-testid="market-status">{m.status}</td>
                <td>{m.best_yes_bid || '–'}</td>
                <td>{m.best_yes_ask || '–'}</td>
                <td>{m.last_tick_yes || '–'}</td>
                <td>{m.status === 'trading' ? countdown(m.close_ts, now) : '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {store.markets.length === 0 && <p>No markets yet.</p>}
      </nav>
      {market !== null && store.book !== null ? (
        <main class="market" aria-labelledby="market-title">
          <h2 id="market-title">
            {market.title} <span class="muted">market {market.market_id}</span>
          </h2>
          <RoundPanel store={store} now={now} />
          <div class="grid">
            <Ladders store={store} />
            <PriceChart store={store} marketId={market.market_id} />
            <Ticket store={store} marketId={market.market_id} />
            <Tape store={store} />
          </div>
          <OpenOrders store={store} />
          <div class="grid two">
            <Positions store={store} />
            <Fills store={store} />
          </div>
        </main>
      ) : (
        <main class="market">
          <p>Pick a market.</p>
        </main>
      )}
    </div>
  );
}
