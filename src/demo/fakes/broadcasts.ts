/** A marketing email broadcast whose draft an assistant may rewrite. */
export interface Broadcast {
  readonly tenant: string;
  readonly id: string;
  readonly name: string;
  /** The audience as it is now: who would receive it. */
  audience: string[];
}

/** The application's broadcasts (in memory). */
export class BroadcastBook {
  readonly #broadcasts = new Map<string, Broadcast>();

  add(broadcast: Broadcast): this {
    this.#broadcasts.set(`${broadcast.tenant}/${broadcast.id}`, structuredClone(broadcast));
    return this;
  }

  find(tenant: string, id: string): Broadcast | undefined {
    return this.#broadcasts.get(`${tenant}/${id}`);
  }

  static demo(): BroadcastBook {
    const book = new BroadcastBook();
    for (const tenant of ['acme', 'globex']) {
      book.add({
        tenant,
        id: 'bc-spring',
        name: 'Spring league opening',
        audience: ['coach.lee@example.test', 'dana.whitfield@example.test', 'ops@example.test'],
      });
    }
    return book;
  }
}
