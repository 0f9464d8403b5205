// The baseline of runtime/benches/oauth.rs: the official MCP TypeScript SDK's client, with
// its OAuth support (an in-memory OAuthClientProvider, as the SDK's simpleOAuthClient
// example), against the same fixture (cli/tests/fixtures/oauth/server.mjs).
//
//   NODE_MODULES=<clients>/node/node_modules node ts-oauth-client.mjs MCP_URL WEB LOGINS ROUNDS CALLS
//
// WEB is the fixture's address for `/browse` (the person at the browser). Prints one JSON
// line: {"login_ms": median login to first call's result, "call_ms": [per-call median of
// each round]}.
import http from 'node:http';

const M = process.env.NODE_MODULES;
const { Client } = await import(`${M}/@modelcontextprotocol/sdk/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(
  `${M}/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js`
);
const { UnauthorizedError } = await import(`${M}/@modelcontextprotocol/sdk/dist/esm/client/auth.js`);

const [mcpUrl, web, logins, rounds, calls] = process.argv.slice(2);

class Provider {
  constructor(redirectUrl, onRedirect) {
    this._redirectUrl = redirectUrl;
    this._onRedirect = onRedirect;
  }
  get redirectUrl() {
    return this._redirectUrl;
  }
  get clientMetadata() {
    return {
      client_name: 'ts-bench',
      redirect_uris: [this._redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
  }
  clientInformation() {
    return this._client;
  }
  saveClientInformation(c) {
    this._client = c;
  }
  tokens() {
    return this._tokens;
  }
  saveTokens(t) {
    this._tokens = t;
  }
  redirectToAuthorization(url) {
    this._onRedirect(url);
  }
  saveCodeVerifier(v) {
    this._verifier = v;
  }
  codeVerifier() {
    return this._verifier;
  }
}

// One login: the redirect listener, the browser (the fixture), the code, the first call.
async function login() {
  let gotCode;
  const code = new Promise((resolve) => (gotCode = resolve));
  const listener = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://127.0.0.1');
    res.end('ok');
    if (u.searchParams.get('code')) gotCode(u.searchParams.get('code'));
  });
  await new Promise((r) => listener.listen(0, '127.0.0.1', r));
  const redirect = `http://127.0.0.1:${listener.address().port}/callback`;
  const provider = new Provider(redirect, (url) => {
    fetch(`http://${web}/browse?url=${encodeURIComponent(url.toString())}`);
  });
  const t = performance.now();
  let client = new Client({ name: 'ts-bench', version: '1.0.0' });
  let transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  try {
    await client.connect(transport);
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) throw e;
    await transport.finishAuth(await code);
    client = new Client({ name: 'ts-bench', version: '1.0.0' });
    transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
    await client.connect(transport);
  }
  const r = await client.callTool({ name: 'whoami', arguments: {} });
  if (!r.content[0].text.startsWith('alice')) throw new Error(JSON.stringify(r));
  const ms = performance.now() - t;
  listener.close();
  return { ms, client };
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const loginMs = [];
let client;
for (let i = 0; i < Number(logins); i += 1) {
  const l = await login();
  loginMs.push(l.ms);
  if (client) await client.close();
  client = l.client;
}
const callMs = [];
for (let r = 0; r < Number(rounds); r += 1) {
  const t = performance.now();
  for (let i = 0; i < Number(calls); i += 1) {
    const res = await client.callTool({ name: 'whoami', arguments: {} });
    if (!res.content[0].text.startsWith('alice')) throw new Error(JSON.stringify(res));
  }
  callMs.push((performance.now() - t) / Number(calls));
}
await client.close();
process.stdout.write(`${JSON.stringify({ login_ms: median(loginMs), call_ms: median(callMs) })}\n`);
process.exit(0);
