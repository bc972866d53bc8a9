import { request as undiciRequest } from 'undici';

export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Set-Cookie headers, one entry each. */
  cookies: string[];
  text: string;
  json<T = any>(): T; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string>;
  /** A value to send as JSON, or a string/Buffer sent as is. */
  json?: unknown;
  body?: string | Buffer;
}

/** One real HTTP request over a socket. */
export async function http(url: string, opts: HttpOptions = {}): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | Buffer | undefined = opts.body;
  if (opts.json !== undefined) {
    body = JSON.stringify(opts.json);
    headers['content-type'] ??= 'application/json';
  }
  const res = await undiciRequest(url, {
    method: (opts.method ?? (body === undefined ? 'GET' : 'POST')) as 'GET',
    headers,
    body,
  });
  const text = await res.body.text();
  const setCookie = res.headers['set-cookie'];
  return {
    status: res.statusCode,
    headers: res.headers as Record<string, string | string[] | undefined>,
    cookies: setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie],
    text,
    json: () => JSON.parse(text),
  };
}

/** name=value of a Set-Cookie line. */
export function cookieValue(cookies: string[], name: string): string | undefined {
  const line = cookies.find((c) => c.startsWith(`${name}=`));
  return line?.slice(name.length + 1).split(';')[0];
}
