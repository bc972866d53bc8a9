/**
 * The HTML error pages people see (404, 403 and the other errors of the fleet pages): a heading
 * that names what is wrong, the details, and a way back to the rig list. Every value from the
 * request is escaped here; `detailsHtml` is markup the caller built from escaped values.
 */

/** Where an error page leads back to: the rig list. */
export const BACK_PATH = '/rigs';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export interface ErrorPage {
  /** The window title, plain text. */
  title: string;
  /** The heading, plain text (escaped here). */
  heading: string;
  /** Paragraphs, already escaped markup. */
  detailsHtml: string;
  /** A link back to the rig list (pages for people; not the rigs' own endpoints). */
  back: boolean;
}

/** Inline, so the page looks right even where the stylesheet itself would be refused (a 403). */
const STYLE =
  'body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5rem;color:#1d2430}' +
  'h1{font-size:1.4rem;overflow-wrap:anywhere}p{overflow-wrap:anywhere}a{color:#0b5cad;text-decoration:none}.back{font-size:0.9rem}';

export function errorPageHtml(page: ErrorPage): string {
  const back = page.back ? `<p class="back"><a href="${BACK_PATH}">&larr; All rigs</a></p>` : '';
  return (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>${escapeHtml(page.title)}</title><style>${STYLE}</style><link rel="icon" href="data:,"></head>` +
    `<body class="error-page"><h1>${escapeHtml(page.heading)}</h1>${page.detailsHtml}${back}</body></html>\n`
  );
}

const TITLES: Record<number, string> = { 400: 'Bad request', 401: 'Not logged in', 403: 'Forbidden', 404: 'Not found', 405: 'Method not allowed', 409: 'Conflict', 503: 'Unavailable' };

/**
 * The page for an error on a route with `errorFormat: 'html'`, or for an unknown path asked for by
 * a browser: "Not found: /rigs/xyz", the message ("rig xyz not found"), a link to /rigs.
 */
export function httpErrorPageHtml(status: number, message: string, path: string): string {
  const name = TITLES[status] ?? `Error ${status}`;
  const shownPath = path.length > 200 ? `${path.slice(0, 200)}…` : path;
  const said = status === 404 && message === 'no such resource' ? `There is no page at ${shownPath}.` : `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;
  return errorPageHtml({
    title: `${name} (${status})`,
    heading: `${name}: ${shownPath}`,
    detailsHtml: `<p class="reason">${escapeHtml(said)}</p>`,
    back: true,
  });
}
