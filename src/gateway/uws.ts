// uws: loads uWebSockets.js and refuses to run on its silent JavaScript
// fallback. The build used here (an npm alias of a uWS.js v20.30 build for
// Node 20) falls back to a slow node:http shim when its native addon fails to
// load; we check that App is a native function. Any thread that serves HTTP.

import { createRequire } from 'node:module';
import type * as UwsTypes from 'uWebSockets.js';

const require = createRequire(import.meta.url);

export type Uws = typeof UwsTypes;
export type HttpResponse = UwsTypes.HttpResponse;
export type HttpRequest = UwsTypes.HttpRequest;
export type TemplatedApp = UwsTypes.TemplatedApp;
export type ListenSocket = UwsTypes.us_listen_socket;

let loaded: Uws | null = null;

/** The native uWebSockets.js module; throws when only the JavaScript fallback is available. */
export function uws(): Uws {
  if (loaded) return loaded;
  const m = require('uWebSockets.js') as Uws;
  const native = Function.prototype.toString.call(m.App).includes('[native code]');
  if (!native) {
    throw new Error('uWebSockets.js native module is not in use (the package fell back to its JavaScript server); refusing to start');
  }
  loaded = m;
  return m;
}
