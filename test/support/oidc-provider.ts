import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** What test/support/oidc-provider.child.mjs is started with. */
export interface OidcProviderSettings {
  /** The resource indicator (RFC 8707) its access tokens are for: their `aud`. */
  resource: string;
  /** The scopes the resource knows; a token holds those requested and granted. */
  resourceScopes: string[];
  publicClient: { id: string; redirectUri: string };
  confidentialClient: { id: string; secret: string };
}

/** The part of the discovery document the flows use. */
export interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
}

/** A token endpoint's answer. */
export interface TokenResponse {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope?: string;
  id_token?: string;
}

const SCRIPT = join(__dirname, 'oidc-provider.child.mjs');
const START_TIMEOUT_MS = 15_000;

const base64url = (bytes: Buffer): string => bytes.toString('base64url');

/** A jar that keeps each cookie's last value and sends all of them (one host, loopback). */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      if (at > 0) this.cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** The first form of an HTML page: where it posts and its hidden fields. */
function formOf(html: string, pageUrl: string): { action: string; fields: URLSearchParams } {
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form?.[1]) throw new Error(`no form on the provider's page ${pageUrl}`);
  const fields = new URLSearchParams();
  for (const input of (form[2] ?? '').matchAll(/<input[^>]*>/g)) {
    const name = /name="([^"]+)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1];
    if (name && /type="hidden"/.test(input[0])) fields.set(name, value ?? '');
  }
  return { action: new URL(form[1], pageUrl).href, fields };
}

/**
 * oidc-provider, a certified OpenID Provider, in a child process on a loopback port (the library
 * is ES modules only; jest cannot load it). Tokens come through its discovery document and real
 * flows over HTTP: `signIn` runs the authorization code flow with PKCE for the public client,
 * posting the provider's login and consent forms with their cookies; `clientCredentials` asks for
 * a token of the confidential client, where no user is involved. `stop()` in afterAll; the child
 * is also killed when the test process exits.
 */
export class OidcProviderProcess {
  private discovered: Promise<Discovery> | null = null;

  private constructor(
    private readonly child: ChildProcess,
    readonly issuer: string,
    readonly settings: OidcProviderSettings,
  ) {}

  static async start(settings: OidcProviderSettings): Promise<OidcProviderProcess> {
    const child = spawn(process.execPath, [SCRIPT, JSON.stringify(settings)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const killOnExit = (): void => void child.kill('SIGKILL');
    process.once('exit', killOnExit);
    child.once('exit', () => process.removeListener('exit', killOnExit));
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const issuer = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the OpenID Provider did not start: ${errors}`));
      }, START_TIMEOUT_MS);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the OpenID Provider exited (${code}): ${errors}`));
      });
      createInterface({ input: child.stdout }).once('line', (line) => {
        clearTimeout(timer);
        resolve((JSON.parse(line) as { issuer: string }).issuer);
      });
    });
    return new OidcProviderProcess(child, issuer, settings);
  }

  /** The discovery document (fetched once): every endpoint the flows use comes from it. */
  discovery(): Promise<Discovery> {
    this.discovered ??= fetch(`${this.issuer}/.well-known/openid-configuration`).then(
      async (res) => {
        if (!res.ok) throw new Error(`discovery answered ${res.status}`);
        return (await res.json()) as Discovery;
      },
    );
    return this.discovered;
  }

  /**
   * The authorization code flow with PKCE for `account`: the authorization request, the login
   * form (any login, any password), the consent form, then the code exchanged with the verifier.
   * The redirect URI is never served: the code is read from the Location header pointing to it.
   */
  async signIn(account: string, scope: string): Promise<TokenResponse> {
    const { authorization_endpoint, token_endpoint } = await this.discovery();
    const { publicClient, resource } = this.settings;
    const verifier = base64url(randomBytes(32));
    const state = base64url(randomBytes(16));
    const authorize = new URL(authorization_endpoint);
    authorize.search = new URLSearchParams({
      client_id: publicClient.id,
      response_type: 'code',
      redirect_uri: publicClient.redirectUri,
      scope,
      resource,
      state,
      code_challenge: base64url(createHash('sha256').update(verifier).digest()),
      code_challenge_method: 'S256',
    }).toString();
    const code = await this.interact(authorize.href, account, state);
    return this.tokenRequest(token_endpoint, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: publicClient.redirectUri,
      client_id: publicClient.id,
      code_verifier: verifier,
      resource,
    });
  }

  /** A client credentials token of the confidential client for the resource. */
  async clientCredentials(scope: string): Promise<TokenResponse> {
    const { token_endpoint } = await this.discovery();
    const { confidentialClient, resource } = this.settings;
    return this.tokenRequest(
      token_endpoint,
      { grant_type: 'client_credentials', scope, resource },
      `Basic ${Buffer.from(`${confidentialClient.id}:${confidentialClient.secret}`).toString('base64')}`,
    );
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    await exited;
  }

  /** Follows the provider's redirects and answers its forms until it redirects to the app. */
  private async interact(start: string, account: string, state: string): Promise<string> {
    const jar = new CookieJar();
    const { redirectUri } = this.settings.publicClient;
    let request: { url: string; body?: URLSearchParams } = { url: start };
    for (let step = 0; step < 12; step++) {
      const res = await fetch(request.url, {
        method: request.body ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: jar.header(),
          ...(request.body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: request.body,
      });
      jar.keep(res);
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        const next = new URL(location, request.url);
        if (next.href.startsWith(redirectUri)) {
          const error = next.searchParams.get('error');
          if (error) throw new Error(`the provider refused: ${error}`);
          if (next.searchParams.get('state') !== state) throw new Error('state mismatch');
          const code = next.searchParams.get('code');
          if (!code) throw new Error(`no code in ${next.href}`);
          return code;
        }
        request = { url: next.href };
        continue;
      }
      if (res.status !== 200) throw new Error(`the provider answered ${res.status}`);
      const { action, fields } = formOf(await res.text(), request.url);
      // The login form asks for a login and a password; the consent form only for its prompt.
      if (fields.get('prompt') === 'login') {
        fields.set('login', account);
        fields.set('password', 'any');
      }
      request = { url: action, body: fields };
    }
    throw new Error('the provider did not redirect to the app within 12 steps');
  }

  private async tokenRequest(
    endpoint: string,
    params: Record<string, string>,
    authorization?: string,
  ): Promise<TokenResponse> {
    const res = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(authorization ? { authorization } : {}),
      },
      body: new URLSearchParams(params),
    });
    const body = (await res.json()) as TokenResponse & { error?: string };
    if (!res.ok) throw new Error(`the token endpoint answered ${res.status}: ${body.error}`);
    return body;
  }
}
