// The slice of oidc-provider (which ships no types) the test identity provider uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface Interaction {
    readonly uid: string;
    readonly prompt: { readonly name: string };
  }

  export interface ProviderGrant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    readonly Grant: new (input: {
      accountId: string;
      clientId: string;
    }) => ProviderGrant;
  }

  export default Provider;
}
