// The API client a window keeps between requests, and when it must make a new one. The
// credentials live in SecretStorage, which every window of the extension shares: when
// another window signs in with another token for the same service URL, this window hears
// of it (secrets.onDidChange) and must stop using the client that holds the old token.
// No vscode import, so the unit tests run it in plain Node.
import type { Credentials } from './rulesApi';

export function sameCredentials(a: Credentials, b: Credentials): boolean {
  if (a.kind === 'token') return b.kind === 'token' && a.token === b.token;
  return b.kind === 'key' && a.email === b.email && a.key === b.key;
}

export class ClientCache<T> {
  private current: { readonly key: string; readonly credentials: Credentials; readonly client: T } | undefined;

  /** `secrets`: the SecretStorage keys the clients' credentials are read from. */
  constructor(private readonly secrets: readonly string[]) {}

  /**
   * The kept client when it was made for this key (service URL) and these very credentials,
   * else a new one from `make`: a token changed in between is never sent with the old one.
   */
  get(key: string, credentials: Credentials, make: () => T): T {
    const c = this.current;
    if (c && c.key === key && sameCredentials(c.credentials, credentials)) return c.client;
    const client = make();
    this.current = { key, credentials, client };
    return client;
  }

  /** A stored secret changed, in this window or another: true when the clients depend on it, and the kept one is dropped. */
  secretChanged(secret: string): boolean {
    if (!this.secrets.includes(secret)) return false;
    this.current = undefined;
    return true;
  }

  clear(): void {
    this.current = undefined;
  }
}
