// Who is asking and what a finished request answers: the tenancy (account and mode) every service
// function scopes its queries by, and the exact bytes a replay sends again.

export interface IdempotencyClaim {
  key: string;
  /** Where a multi-phase operation got to; `started` means nothing has been committed yet. */
  recoveryPoint: string;
}

/** Who is asking, as every service function needs it: tenancy, mode and request trail. */
export interface RequestContext {
  accountId: string;
  livemode: boolean;
  requestId: string;
  idempotency?: IdempotencyClaim;
  /**
   * A key not yet claimed: a one-statement path claims it in the statement that does the work;
   * when that path writes nothing, `claim` claims it the general way (a finished key's answer is
   * returned for replay; otherwise the request now owns the key).
   */
  deferredIdempotency?: { key: string; fingerprint: string; retentionS: number; claim(): Promise<Outcome | undefined> };
}

/** A finished response: the exact bytes are what a replay sends again. */
export interface Outcome {
  status: number;
  body: string;
  /** A stored answer sent again (Idempotent-Replayed: true). */
  replayed?: boolean;
}
