// A certified OpenID provider (the oidc-provider package) on loopback over TLS, for the
// OpenID Connect sign-in tests (tests/oidc/). Its development sign-in page takes any password
// for the accounts below. Configured from the environment by tests/oidc/provider.py; prints
// "ready" once it listens.
import fs from 'node:fs';
import https from 'node:https';

import Provider from 'oidc-provider';

const env = process.env;
const ACCOUNTS = JSON.parse(env.OIDC_ACCOUNTS);

const provider = new Provider(env.OIDC_ISSUER, {
  clients: [{
    client_id: env.OIDC_CLIENT_ID,
    client_secret: env.OIDC_CLIENT_SECRET,
    redirect_uris: env.OIDC_REDIRECT_URIS.split(' '),
    post_logout_redirect_uris: env.OIDC_POST_LOGOUT_URIS.split(' '),
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  }],
  // The ID token carries the claims the API server reads (email, groups).
  conformIdTokenClaims: false,
  claims: { openid: ['sub'], email: ['email', 'email_verified'], groups: ['groups'] },
  scopes: ['openid', 'email', 'groups', 'offline_access'],
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
  ttl: {
    IdToken: Number(env.OIDC_ID_TOKEN_TTL),
    AccessToken: Number(env.OIDC_ID_TOKEN_TTL),
    RefreshToken: 3600,
    Session: 3600,
    Grant: 3600,
    Interaction: 600,
  },
  cookies: { keys: ['dashboard-api-tests-only'] },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  async findAccount(ctx, id) {
    const account = ACCOUNTS[id];
    if (!account) {
      return undefined;
    }
    return {
      accountId: id,
      async claims() {
        return { sub: id, email: account.email, email_verified: true, groups: account.groups };
      },
    };
  },
});
provider.proxy = false;

const server = https.createServer({
  cert: fs.readFileSync(env.OIDC_TLS_CERT), key: fs.readFileSync(env.OIDC_TLS_KEY),
}, provider.callback());
server.listen(Number(env.OIDC_PORT), '127.0.0.1', () => console.log('ready'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
