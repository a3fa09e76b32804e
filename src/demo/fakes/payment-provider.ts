import { appendFileSync, existsSync, readFileSync } from 'node:fs';

/**
 * A fake payment provider with the failure modes of real ones: a response lost after the provider
 * committed (timeout after send), a definite decline, and idempotency keys (the same key with the
 * same payload returns the first result; with another payload it is refused).
 */
export interface PaymentRequest {
  readonly destination_account_id: string;
  readonly amount_minor: number;
  readonly currency: string;
  readonly reference: string;
}

export interface Payment extends PaymentRequest {
  readonly paymentId: string;
  readonly idempotencyKey: string;
}

/** How the next matching call fails. */
export type FailureMode = 'timeout_after_commit' | 'timeout_before_commit' | 'decline';

/** The provider answered nothing in time; it may or may not have committed. */
export class ProviderTimeoutError extends Error {
  override readonly name = 'ProviderTimeoutError';
}

/** The provider definitively refused; nothing happened. */
export class ProviderDeclinedError extends Error {
  override readonly name = 'ProviderDeclinedError';
}

/** The idempotency key was used before with a different payload. */
export class IdempotencyConflictError extends Error {
  override readonly name = 'IdempotencyConflictError';
}

export class FakePaymentProvider {
  readonly #byKey = new Map<string, Payment>();
  readonly #journal: string | undefined;
  readonly #rules: { match: (r: PaymentRequest) => boolean; mode: FailureMode; times: number }[] = [];
  #calls = 0;
  #sequence = 0;

  /**
   * @param options.journal a file the provider appends every call and commit to (synchronously), so
   *   that several processes, or a process killed mid-call, share one provider's memory.
   */
  constructor(options: { journal?: string } = {}) {
    this.#journal = options.journal;
    if (this.#journal && existsSync(this.#journal)) {
      for (const line of readFileSync(this.#journal, 'utf8').split('\n')) {
        if (!line) continue;
        const entry = JSON.parse(line) as { type: 'call' } | { type: 'payment'; payment: Payment };
        if (entry.type === 'call') this.#calls++;
        else {
          this.#byKey.set(entry.payment.idempotencyKey, entry.payment);
          this.#sequence++;
        }
      }
    }
  }

  #append(entry: object): void {
    if (this.#journal) appendFileSync(this.#journal, `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  }

  /** Number of `pay` calls received, including duplicates and failures. */
  get calls(): number {
    return this.#calls;
  }

  /** Every payment the provider committed, once each. */
  get payments(): readonly Payment[] {
    return [...this.#byKey.values()];
  }

  /** Makes the next `times` calls matching `match` fail with `mode`. */
  failWhen(match: (request: PaymentRequest) => boolean, mode: FailureMode, times = 1): void {
    this.#rules.push({ match, mode, times });
  }

  async pay(request: PaymentRequest, options: { idempotencyKey: string }): Promise<Payment> {
    this.#calls++;
    this.#append({ type: 'call', key: options.idempotencyKey });
    const previous = this.#byKey.get(options.idempotencyKey);
    if (previous) {
      const same =
        previous.destination_account_id === request.destination_account_id &&
        previous.amount_minor === request.amount_minor &&
        previous.currency === request.currency &&
        previous.reference === request.reference;
      if (!same)
        throw new IdempotencyConflictError(
          `idempotency key ${options.idempotencyKey} was used with another payload`,
        );
      return previous;
    }
    const rule = this.#rules.find((r) => r.times > 0 && r.match(request));
    if (rule) rule.times--;
    if (rule?.mode === 'decline') throw new ProviderDeclinedError('payment declined by the provider');
    if (rule?.mode === 'timeout_before_commit') throw new ProviderTimeoutError('provider timed out');
    const payment: Payment = {
      ...request,
      paymentId: `pay_${++this.#sequence}`,
      idempotencyKey: options.idempotencyKey,
    };
    this.#byKey.set(options.idempotencyKey, payment);
    this.#append({ type: 'payment', payment });
    if (rule?.mode === 'timeout_after_commit') throw new ProviderTimeoutError('provider timed out');
    return payment;
  }

  /** The provider's record of a call, by idempotency key. */
  async lookup(idempotencyKey: string): Promise<Payment | undefined> {
    return this.#byKey.get(idempotencyKey);
  }
}
