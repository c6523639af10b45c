// key_creation: what a key creation answered 504 sequencing_timeout leaves
// behind. The command may still be sequenced after the answer, and its key
// would then exist with a secret the lane generated and handed to nobody.
// The lanes that create keys (the keys service, the control plane) submit
// CreateKey with revokeLateKey as the late completion's hook
// (GatewayCore.submit), and say so in the 504. Gateway-core threads (the
// main thread here).

import { CompletionStatus, RevokeKey, T_REVOKE_KEY } from '../layout/records.js';
import type { Completion, GatewayCore } from './core.js';
import { ApiError, codeByNum } from './envelope.js';

/** The 504 of a key creation (both lanes that create keys): the key may still be created, and is then revoked at once. */
export const KEY_CREATION_TIMEOUT = 'no sequenced outcome within the response budget; a key created after this answer is revoked at ' +
  'once (its secret was never handed out): create the key again';

/**
 * The late completion of a CreateKey answered 504 (GatewayCore.submit's `late`): the key exists, but its secret went
 * to nobody, so it is revoked (by `account`: the key's own, or 0 for the operator). Retried while unanswered or shed;
 * a node that is no longer writable (a primary stepping down) gives up. Logs `late_key_revoked` once it is, else
 * `late_key_not_revoked`. Never throws: it runs from an Immediate, where a throw would end the process.
 */
export function revokeLateKey(core: GatewayCore, late: Completion, account: number, log?: (f: Record<string, unknown>) => void): void {
  if (late.status === CompletionStatus.rejected) return;
  const keyId = late.result;
  const giveUp = (why: string): void => log?.({ event: 'late_key_not_revoked', key_id: keyId, reason: why });
  const attempt = (left: number): void => {
    let outcome: Promise<Completion | null>;
    try {
      outcome = core.submit(T_REVOKE_KEY, RevokeKey.SIZE, account, false, (m, o) => RevokeKey.set_key_id(m, o, keyId));
    } catch (e) {
      // hold() refuses at once: every slot held (shed) passes; anything else (not_primary) is final.
      if (e instanceof ApiError && e.code === 'shed' && left > 0) setTimeout(() => attempt(left - 1), 100);
      else giveUp(e instanceof ApiError ? e.code : String(e));
      return;
    }
    core.kick();
    outcome.then((r) => {
      if (r === null) {
        if (left > 0) attempt(left - 1);
        else giveUp('no outcome');
      } else if (r.status === CompletionStatus.rejected) {
        giveUp(codeByNum(r.code_num).code);
      } else {
        log?.({ event: 'late_key_revoked', key_id: keyId, reason: 'created after its request was answered 504' });
      }
    }, (e: unknown) => giveUp(String(e)));
  };
  attempt(10);
}
