/** A minimal browser stand-in for console tests: one cookie jar and same-origin headers by default. */
export class ConsoleClient {
  readonly #base: string;
  readonly cookies = new Map<string, string>();
  readonly #origin: string;

  constructor(base: string, origin = base) {
    this.#base = base;
    this.#origin = origin;
  }

  #remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; html: string; response: Response }> {
    const response = await fetch(`${this.#base}${path}`, {
      redirect: 'manual',
      headers: { cookie: this.cookieHeader, ...headers },
    });
    this.#remember(response);
    return { status: response.status, html: await response.text(), response };
  }

  /** A form post as a same-origin browser sends it (override headers to play a cross-site one). */
  async post(
    path: string,
    fields: Record<string, string> | [string, string][],
    headers: Record<string, string> = {},
  ) {
    const body = new URLSearchParams(fields).toString();
    const response = await fetch(`${this.#base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader,
        'content-type': 'application/x-www-form-urlencoded',
        origin: this.#origin,
        'sec-fetch-site': 'same-origin',
        ...headers,
      },
      body,
    });
    this.#remember(response);
    return {
      status: response.status,
      html: await response.text(),
      response,
      location: response.headers.get('location'),
    };
  }

  /** Signs in through the login form; returns the response of the form post. */
  async login(email: string, password: string) {
    const form = await this.get('/login');
    const csrf = hidden(form.html, 'csrf');
    return this.post('/login', { csrf, email, password });
  }

  /** The session's CSRF token, read from a signed-in page's sign-out form. */
  async csrf(): Promise<string> {
    return hidden((await this.get('/')).html, 'csrf');
  }
}

/** The value of the first hidden input named `name` in a page. */
export function hidden(html: string, name: string): string {
  const match = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)"`).exec(html);
  if (!match) throw new Error(`no hidden input ${name}`);
  return match[1]!;
}
