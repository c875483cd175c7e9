// A real OpenID provider (`oidc-provider`) on loopback for the single sign-on tests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** One person at the test provider: the claims it gives. */
export interface SsoAccount {
  email: string;
  email_verified: boolean;
  name: string;
  groups: string[];
}

export interface TestProvider {
  server: Server;
  issuer: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the provider on 127.0.0.1 with one confidential client (`podium`, client_secret_basic,
 * PKCE S256 required) whose only redirect URL is `redirectUri`, and the provider's development
 * login and consent pages: any password signs in the account named by the login. `accounts` is
 * read at each sign-in, so a test may change someone's groups between sign-ins.
 */
export async function startProvider(
  redirectUri: string,
  clientSecret: string,
  accounts: Record<string, SsoAccount>,
): Promise<TestProvider> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'podium',
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    findAccount: (_ctx, id) =>
      accounts[id] ? { accountId: id, claims: () => ({ sub: id, ...accounts[id] }) } : undefined,
    pkce: { methods: ['S256'], required: () => true },
    cookies: { keys: ['provider-cookie-key-for-tests'] },
    features: { devInteractions: { enabled: true } },
  });
  server.on('request', provider.callback());
  return {
    server,
    issuer,
    port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
