/* judgeapp's service worker (scope /). VERSION (corpus, policies, assets) is written in by the server.
   Install: precache every page in /offline/precache.json; a new version replaces the old cache at once.
   Pages: the network first (a few seconds at most), else the kept copy with the offline banner shown.
   Assets (content-hashed names) and the offline indexes: the kept copy first.
   Wizard URLs are normalised (answers on the path from the start, in path order) so that a kept page
   answers any URL that reaches the same question or outcome. */
const CACHE = "judgeapp-" + VERSION;
const NETWORK_TIMEOUT_MS = 4000;
let tree = null;

/* The library is fetched without cookies (the same for everyone, and a judge's session is never touched
   by the worker); a signed-in judge's event pages with them. */
async function precacheList(cache, listUrl, skipKept, credentials) {
  const res = await fetch(listUrl, { credentials: credentials, cache: "no-store" });
  if (!res.ok) throw new Error(listUrl + " " + res.status);
  const list = await res.json();
  const urls = list.urls;
  const bundled = new Set();
  if (list.bundle) { /* every page in one answer, then the rest one by one */
    const b = await fetch(list.bundle, { credentials: credentials });
    if (!b.ok) throw new Error(list.bundle + " " + b.status);
    const pages = (await b.json()).pages;
    await Promise.all(Object.keys(pages).map((url) => {
      bundled.add(url);
      return cache.put(url, new Response(pages[url], { headers: { "Content-Type": "text/html; charset=utf-8" } }));
    }));
  }
  let next = 0;
  async function worker() {
    while (next < urls.length) {
      const url = urls[next++];
      if (bundled.has(url) || (skipKept && await cache.match(url))) continue;
      const r = await fetch(url, { credentials: credentials, redirect: "follow" });
      if (r.ok && !r.redirected) await cache.put(url, r);
      else if (!skipKept) throw new Error(url + " " + r.status);
    }
  }
  await Promise.all([worker(), worker(), worker(), worker(), worker(), worker()]);  // a browser opens 6 connections
  return urls.length;
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    const count = await precacheList(cache, "/offline/precache.json", false, "omit");
    await cache.put("/offline/ready", new Response(JSON.stringify({ version: VERSION, count: count, at: Date.now() }),
      { headers: { "Content-Type": "application/json" } }));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) if (name.startsWith("judgeapp-") && name !== CACHE) await caches.delete(name);
    await self.clients.claim();
  })());
});

/* The event's pages, one run at a time (every event page a judge opens asks for them: two runs at once would
   write the same pages twice), then the mark "/offline/event-ready": until a run has written them all, the
   worker may answer a page it is still writing as 「オフラインでは開けません」 (seen under load). A sign-out's
   removal waits for the run in progress too, which would otherwise put the pages back. */
let eventPages = Promise.resolve();
function afterEventPages(task) {
  eventPages = eventPages.then(task).catch(() => 0);
  return eventPages;
}

self.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type === "event-pages") { /* then "/offline/event-ready": the event's pages are all kept */
    event.waitUntil(afterEventPages(() => caches.open(CACHE).then(async (c) => {
      const count = await precacheList(c, "/offline/precache.json?part=event", true, "same-origin");
      await c.put("/offline/event-ready", new Response(JSON.stringify({ count: count, at: Date.now() }),
        { headers: { "Content-Type": "application/json" } }));
    })));
  } else if (data.type === "forget-events") { /* signed out: the event's pages leave the phone */
    event.waitUntil(afterEventPages(() => caches.open(CACHE).then(async (c) => {
      await c.delete("/offline/event-ready");
      for (const req of await c.keys()) if (new URL(req.url).pathname.startsWith("/events/")) await c.delete(req);
    })));
  } else if (data.type === "flush-queue") {
    event.waitUntil(tellClients("flush-queue"));
  }
});

self.addEventListener("sync", (event) => {
  if (event.tag === "record-queue") event.waitUntil(syncQueue());
});

/* Background Sync: an open page sends the queue itself; with none open, the worker sends the copy the page
   left in IndexedDB and notes each outcome for the next page. The server records an idempotency key once,
   so a record the page sends again lands once. */
async function syncQueue() {
  const open = await self.clients.matchAll({ type: "window" });
  if (open.length) return tellClients("flush-queue");
  const queue = (await judgeappStore.get("queue")) || [];
  const outcomes = (await judgeappStore.get("outcomes")) || {};
  const tokens = {};
  for (const item of queue) {
    if (item.state !== "pending" || outcomes[item.key]) continue;
    if (tokens[item.action] === undefined) {
      const page = await fetch(item.action, { credentials: "same-origin" });
      const m = (await page.text()).match(/name="csrf_token" value="([^"]+)"/);
      tokens[item.action] = m && !page.url.includes("/signin") ? m[1] : null;
    }
    const t = tokens[item.action];
    const fields = item.fields.map((f) => (f[0] === "csrf_token" && t ? [f[0], t] : f));
    const res = await fetch(item.action, { method: "POST", credentials: "same-origin", redirect: "follow",
      headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
    if (res.ok && res.redirected && !res.url.includes("/signin")) outcomes[item.key] = { state: "sent" };
    else if (res.status >= 400 && res.status < 500) {
      const alert = (await res.text()).match(/role="alert"[^>]*>([^<]+)</);
      outcomes[item.key] = { state: "refused", reason: alert ? alert[1].trim() : "サーバーが受け付けませんでした（" + res.status + "）" };
    }
    await judgeappStore.set("outcomes", outcomes);
  }
  await tellClients("queue-updated");
}

async function tellClients(type) {
  for (const c of await self.clients.matchAll({ type: "window" })) c.postMessage({ type: type });
}

let training = null;
async function trainingRuns() {
  if (training) return training;
  const cache = await caches.open(CACHE);
  const r = (await cache.match("/offline/training.json")) || (await fetch("/offline/training.json"));
  training = await r.json();
  return training;
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

/* Training offline: the kept run's pages were rendered with the right answers before each question; the
   judge's own answers are put back into the links (and into the summary's score and its list to review). */
async function trainingCopy(url) {
  const m = url.pathname.match(/^\/training\/([^/]+)$/);
  if (!m || !url.searchParams.get("run")) return null;
  const t = (await trainingRuns())[m[1]];
  if (!t || url.searchParams.get("run") !== t.run.join(",")) return null;
  const given = (url.searchParams.get("a") || "").split(",").filter(Boolean);
  const next = url.searchParams.get("next") === "1";
  const n = t.run.length, k = given.length;
  if (k > n || given.some((g) => !t.choices.includes(g))) return null;
  const at = (answers, nxt) => {
    const q = new URLSearchParams();
    if (answers.length) q.set("a", answers.join(","));
    if (nxt) q.set("next", "1");
    const s = q.toString();
    return s ? t.base + "&" + s : t.base;
  };
  let key;
  if (k === 0) key = at([], false);
  else if (!next) key = at(t.expected.slice(0, k - 1).concat([given[k - 1]]), false);
  else key = at(t.expected.slice(0, k), true);
  const cache = await caches.open(CACHE);
  const kept = await cache.match(key);
  if (!kept) return null;
  let html = await kept.text();
  // Links: the answers before this page are the judge's, not the right ones.
  html = html.replace(/href="(\/training\/[^"]*)"/g, (all, href) => {
    const u = new URL(href.replace(/&amp;/g, "&"), url.origin);
    const a = (u.searchParams.get("a") || "").split(",").filter(Boolean);
    if (!a.length) return all;
    const mine = given.slice(0, Math.min(k, a.length - 1)).concat(a.slice(Math.min(k, a.length - 1)));
    u.searchParams.set("a", mine.join(","));
    return 'href="' + escapeHtml(u.pathname + u.search) + '"';
  });
  if (next && k === n) { // the summary: the judge's score and the questions to review
    const missed = t.run.map((_, i) => i).filter((i) => given[i] !== t.expected[i]);
    html = html.replace(/<h1>[^<]*<\/h1>/, "<h1>" + n + " 問中 " + (n - missed.length) + " 問正解</h1>");
    if (missed.length) {
      const items = missed.map((i) => "<li>" + escapeHtml(t.situations[i]) + '<div class="small">答え：<strong>' +
        escapeHtml(t.labels[t.expected[i]]) + '</strong>・<a href="/wizard/' + escapeHtml(m[1]) + "/" +
        escapeHtml(t.infractions[i][0]) + '">' + escapeHtml(t.infractions[i][1]) + "</a></div></li>").join("");
      html = html.replace('<p class="empty">全問正解です。</p>', '<h2>見直す問題</h2>\n<ol class="results">' + items + "</ol>");
    }
  }
  return html;
}

async function wizardTree() {
  if (tree) return tree;
  const cache = await caches.open(CACHE);
  const r = (await cache.match("/offline/wizard.json")) || (await fetch("/offline/wizard.json"));
  tree = await r.json();
  return tree;
}

/* The kept copy's key for a URL. */
async function cacheKey(url) {
  const p = url.pathname, q = url.searchParams;
  let m;
  if (p.startsWith("/rules/") || p === "/search" || p === "/offline/missing") return p;
  if ((m = p.match(/^\/wizard\/([^/]+)(?:\/([^/]+))?$/)) && m[2] !== "graph") {
    const game = m[1], outcome = m[2];
    const t = (await wizardTree())[game];
    if (!t) return p;
    const path = [];
    let node = t.start, reached = null;
    for (let i = 0; i < 200 && node; i++) {
      if (q.get("at") === node) break;
      const ans = t.nodes[node] && t.nodes[node][q.get(node)];
      if (!ans) break;
      path.push([node, q.get(node)]);
      if (ans.outcome) { reached = ans.outcome; break; }
      node = ans.next;
    }
    const qs = new URLSearchParams(path).toString();
    if (outcome) return reached === outcome && qs ? p + "?" + qs : p;
    if (reached) return "/wizard/" + game + "/" + reached + "?" + qs;
    return qs ? p + "?" + qs : p;
  }
  if ((m = p.match(/^\/events\/\d+\/record$/))) return q.get("player") ? p + "?player=" + encodeURIComponent(q.get("player")) : p;
  if (p === "/decks") return q.get("game") ? p + "?game=" + encodeURIComponent(q.get("game")) : p;
  return p + url.search;
}

async function offlineCopy(key, url) {
  const cache = await caches.open(CACHE);
  const m = url.pathname.match(/^\/training\/([^/]+)\/start$/);
  if (m) { // a run the phone keeps, instead of a random one
    const t = (await trainingRuns())[m[1]];
    if (t) return Response.redirect(t.base, 302);
  }
  const trained = await trainingCopy(url);
  if (trained !== null) {
    return new Response(trained.replace("data-offline-banner hidden", "data-offline-banner"),
      { status: 200, headers: { "Content-Type": "text/html; charset=utf-8", "X-Judgeapp-Offline": VERSION } });
  }
  let r = await cache.match(key);
  if (!r) r = await cache.match("/offline/missing");
  if (!r) return Response.error();
  const html = (await r.text()).replace("data-offline-banner hidden", "data-offline-banner");
  return new Response(html, { status: 200, headers: { "Content-Type": "text/html; charset=utf-8", "X-Judgeapp-Offline": VERSION } });
}

function withTimeout(promise, ms) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("timeout")), ms);
    promise.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}

async function page(request) {
  const url = new URL(request.url);
  const key = await cacheKey(url);
  try {
    const res = await withTimeout(fetch(request), NETWORK_TIMEOUT_MS);
    const type = res.headers.get("Content-Type") || "";
    /* Kept only at its own normalised URL: a page for a query (search results, a lookup, a standing
       calculation) must not stand in for the plain page. */
    if (res.ok && !res.redirected && type.startsWith("text/html") && key === url.pathname + url.search &&
        !url.pathname.startsWith("/offline/") && !/no-store/.test(res.headers.get("Cache-Control") || "")) {
      const copy = res.clone();
      caches.open(CACHE).then((c) => c.put(key, copy));
    }
    return res;
  } catch (e) {
    return offlineCopy(key, url);
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin || url.pathname.startsWith("/api/")) return;
  if (url.pathname === "/sw.js") return;
  if (request.mode === "navigate") { event.respondWith(page(request)); return; }
  if (url.pathname.startsWith("/static/") || url.pathname.startsWith("/offline/") || url.pathname === "/manifest.webmanifest" || url.pathname === "/favicon.ico") {
    event.respondWith(caches.open(CACHE).then((c) => c.match(url.pathname + url.search).then((hit) => hit || fetch(request))));
  }
});
