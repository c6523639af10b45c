// The client library's public surface: REST, keys service and control
// plane clients, request signing, errors and wire types.
// Runs in the caller's thread.

export { DxClient, paginatePages, type DxClientOptions, type PageKinds } from './client.js';
export {
  KeysClient,
  type KeysClientOptions,
  /** @deprecated The earlier name of KeysClient (kept for existing programs). */
  KeysClient as AccountsClient,
  /** @deprecated The earlier name of KeysClientOptions. */
  type KeysClientOptions as AccountsClientOptions,
} from './keys_client.js';
export { AdminClient, type AdminClientOptions, type RoundAction } from './admin_client.js';
export {
  authHeaders,
  canonicalString,
  decodeSecret,
  signRequest,
  HEADER_KEY,
  HEADER_SIGNATURE,
  HEADER_TIMESTAMP,
  SECRET_BYTES,
  type AuthHeaders,
} from './sign.js';
export { DxApiError, isItemError, parseErrorBody } from './errors.js';
export { buildQuery, closeFetchConnections, HttpTransport, type Query, type TransportOptions } from './transport.js';
export type * from './types.js';
export { CLIENT_LAYOUT_FINGERPRINT, decodeResults, FrameEncoder, type EntryResultObject } from './binary_codec.js';
export {
  DxConnectionLost, DxWebSocket, DxWsError, type DataHandler, type DxWebSocketOptions, type Subscription, type WsMessage,
} from './websocket.js';
export { DxOrderStream } from './order_stream.js';
