import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * What the page sends to finish a sign-in another page started: the browser sent on to `/` from the
 * page's own origin, by a refresh (which takes the place of the address with the token in the
 * history), with a link for a browser that does not follow refreshes. No script: the page's
 * Content-Security-Policy allows none inline.
 */
const GO_ON_PAGE = [
  '<!doctype html>',
  '<html lang="en">',
  '<head>',
  '<meta charset="utf-8">',
  '<meta http-equiv="refresh" content="0;url=/">',
  '<title>skilld</title>',
  '</head>',
  '<body>',
  '<p><a href="/">Go on to the page</a></p>',
  '</body>',
  '</html>',
  '',
].join('\n');

/**
 * The answer to the printed address, its token right: the session cookie, and the browser sent on
 * to `/` at once, so that the token leaves the address bar and the history. A 303 does so when the
 * browser itself began the visit (the address typed or pasted, or handed to it as an argument),
 * as its `Sec-Fetch-Site` says (`none`; a browser too old to say is taken at its word). When
 * another page began it (the file `skillctl web --open` hands the browser, a link elsewhere), the
 * browser would not send the `SameSite=Strict` cookie with the next request of that same visit,
 * and `/` would answer 401: a small page of the page's own sends it on instead.
 */
export function signIn(req: IncomingMessage, res: ServerResponse, cookie: string): void {
  const site = req.headers['sec-fetch-site'];
  if (site === undefined || site === 'none' || site === 'same-origin') {
    res.writeHead(303, { 'Set-Cookie': cookie, Location: '/' }).end();
    return;
  }
  res.writeHead(200, { 'Set-Cookie': cookie, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': Buffer.byteLength(GO_ON_PAGE) });
  res.end(GO_ON_PAGE);
}
