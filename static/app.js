/* judgeapp in the browser: light/dark toggle, the offline worker, copy-link, search highlights,
   #anchor links, and the record queue (records kept on the phone until the server has them). */
(function () {
  "use strict";
  var QUEUE_KEY = "judgeapp.queue";

  /* --- light / dark ---------------------------------------------------------------------------- */
  function effectiveTheme() {
    var t = document.documentElement.getAttribute("data-theme");
    if (t) return t;
    return window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  function setupTheme() {
    var b = document.getElementById("theme-toggle");
    if (!b) return;
    function label() { b.setAttribute("aria-pressed", effectiveTheme() === "dark" ? "true" : "false"); }
    label();
    b.addEventListener("click", function () {
      var next = effectiveTheme() === "dark" ? "light" : "dark";
      document.documentElement.setAttribute("data-theme", next);
      try { localStorage.setItem("theme", next); } catch (e) { /* not remembered */ }
      label();
    });
  }

  /* --- the offline worker ---------------------------------------------------------------------- */
  function servedOffline() { var b = document.getElementById("offline-banner"); return !!(b && !b.hidden); }
  function setupWorker() {
    if (!("serviceWorker" in navigator)) return;
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(function () { /* http on a LAN address */ });
    navigator.serviceWorker.addEventListener("message", function (e) {
      if (e.data && e.data.type === "flush-queue") flush();
      if (e.data && e.data.type === "queue-updated") applyWorkerOutcomes();
    });
    document.querySelectorAll("form.signout").forEach(function (f) {
      f.addEventListener("submit", function () {
        if (navigator.serviceWorker.controller) navigator.serviceWorker.controller.postMessage({ type: "forget-events" });
      });
    });
    if (/^\/events\/\d+/.test(location.pathname) && !servedOffline()) {
      navigator.serviceWorker.ready.then(function (r) { r.active && r.active.postMessage({ type: "event-pages" }); });
    }
  }

  /* --- copy link: clipboard, else the share sheet, else a selected URL ------------------------- */
  function setupCopy() {
    document.querySelectorAll("[data-copy]").forEach(function (b) {
      var input = document.getElementById(b.getAttribute("data-copy"));
      input.addEventListener("focus", function () { input.select(); });
      b.addEventListener("click", function () {
        var url = input.value;
        function fallback() {
          if (navigator.share) { navigator.share({ url: url, title: document.title }).catch(select); return; }
          select();
        }
        function select() { input.focus(); input.select(); b.textContent = "選択しました：長押しでコピー"; }
        if (navigator.clipboard && window.isSecureContext) {
          navigator.clipboard.writeText(url).then(function () { b.textContent = "コピーしました"; }, fallback);
        } else fallback();
      });
    });
  }

  /* --- an opened search result shows the words that matched ------------------------------------ */
  function rememberMarks() {
    var map = {};
    document.querySelectorAll("main ol.results li").forEach(function (li) {
      var a = li.querySelector("a.title");
      if (!a) return;
      var words = Array.prototype.map.call(li.querySelectorAll("mark"), function (m) { return m.textContent; });
      var q = new URLSearchParams(location.search).get("q");
      if (q) words = words.concat(q.split(/\s+/));
      map[a.getAttribute("href")] = words.filter(function (w) { return w && w.length > 0; });
    });
    try { sessionStorage.setItem("judgeapp.marks", JSON.stringify(map)); } catch (e) { /* no highlight */ }
  }
  window.judgeappRememberMarks = rememberMarks;
  function highlight() {
    var body = document.querySelector("main .body");
    if (!body) return;
    var words;
    try { words = (JSON.parse(sessionStorage.getItem("judgeapp.marks") || "{}"))[location.pathname]; } catch (e) { return; }
    if (!words || !words.length) return;
    words = Array.from(new Set(words)).sort(function (a, b) { return b.length - a.length; });
    var re = new RegExp(words.map(function (w) { return w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); }).join("|"), "g");
    var walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT), nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    var first = null;
    nodes.forEach(function (n) {
      var t = n.nodeValue, m, last = 0, frag = null;
      re.lastIndex = 0;
      while ((m = re.exec(t)) && m[0]) {
        frag = frag || document.createDocumentFragment();
        frag.appendChild(document.createTextNode(t.slice(last, m.index)));
        var mk = document.createElement("mark"); mk.textContent = m[0]; frag.appendChild(mk);
        first = first || mk;
        last = m.index + m[0].length;
      }
      if (frag) { frag.appendChild(document.createTextNode(t.slice(last))); n.parentNode.replaceChild(frag, n); }
    });
    if (first && first.getBoundingClientRect().top > window.innerHeight * 0.8) first.scrollIntoView({ block: "center" });
  }

  /* --- …/floor-rules#6b-iii lands on the section ----------------------------------------------- */
  function anchors() {
    if (!location.hash || location.hash.length < 2) return;
    var id = decodeURIComponent(location.hash.slice(1));
    if (document.getElementById(id)) return;
    var links = document.querySelectorAll("main a[href]");
    for (var i = 0; i < links.length; i++) {
      var h = links[i].getAttribute("href");
      if (h.indexOf("/rules/") === 0 && (h.slice(-id.length - 1) === "/" + id)) { location.replace(h); return; }
    }
  }

  /* --- the record queue ------------------------------------------------------------------------ */
  function readQueue() { try { return JSON.parse(localStorage.getItem(QUEUE_KEY) || "[]"); } catch (e) { return []; } }
  function writeQueue(q) {
    localStorage.setItem(QUEUE_KEY, JSON.stringify(q));
    if (window.judgeappStore) judgeappStore.set("queue", q).catch(function () { /* the worker's copy only */ });
    renderQueue();
  }
  /* What the worker did on Background Sync while no page was open. */
  function applyWorkerOutcomes() {
    if (!window.judgeappStore) return Promise.resolve();
    return judgeappStore.get("outcomes").then(function (outcomes) {
      if (!outcomes || !Object.keys(outcomes).length) return;
      var q = readQueue(), sent = [];
      q = q.filter(function (x) {
        var o = outcomes[x.key];
        if (o && o.state === "sent") { sent.push(x); return false; }
        if (o && o.state === "refused") { x.state = "refused"; x.reason = o.reason; }
        return true;
      });
      return judgeappStore.set("outcomes", {}).then(function () { writeQueue(q); sent.forEach(sentNotice); });
    }).catch(function () { /* no IndexedDB: the page sends the queue itself */ });
  }
  function newKey() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    var a = new Uint8Array(16); crypto.getRandomValues(a);
    return Array.prototype.map.call(a, function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
  }

  /* The record this page is sending right now, online: not shown as 未送信 while it goes (a judge took the
     flash of the box for a failure); shown if the send does not land. */
  var sendingNow = null;
  var whenKept = null; /* the form's note, told when the record it sends does not land (kept as 未送信) */
  function renderQueue() {
    var old = document.getElementById("record-queue");
    if (old) old.remove();
    var q = readQueue().filter(function (x) { return x.key !== sendingNow; });
    if (!q.length) return;
    var main = document.querySelector("main");
    if (!main) return;
    var box = document.createElement("section");
    box.id = "record-queue";
    box.setAttribute("aria-label", "未送信の記録");
    var h = document.createElement("h2"); h.textContent = "端末に保存した記録（" + q.length + " 件）"; box.appendChild(h);
    q.forEach(function (item) {
      var d = document.createElement("div");
      d.className = "pending" + (item.state === "refused" ? " refused" : "");
      d.setAttribute("data-key", item.key);
      var s = document.createElement("p"); s.className = "state";
      s.textContent = item.state === "refused" ? "送信できませんでした" : "未送信";
      d.appendChild(s);
      var p = document.createElement("p"); p.textContent = item.summary; d.appendChild(p);
      var f = document.createElement("p"); f.className = "small"; f.textContent = "事実：" + item.facts; d.appendChild(f);
      if (item.reason) { var r = document.createElement("p"); r.className = "small warn"; r.setAttribute("role", "alert"); r.textContent = "理由：" + item.reason; d.appendChild(r); }
      if (item.state === "refused") {
        var retry = document.createElement("button"); retry.type = "button"; retry.className = "secondary"; retry.textContent = "もう一度送る";
        retry.addEventListener("click", function () { setState(item.key, "pending", ""); flush(); });
        var drop = document.createElement("button"); drop.type = "button"; drop.className = "secondary"; drop.textContent = "この記録を破棄";
        drop.addEventListener("click", function () {
          if (confirm("この記録を端末から消します。サーバーには届いていません。よろしいですか？")) writeQueue(readQueue().filter(function (x) { return x.key !== item.key; }));
        });
        d.appendChild(retry); d.appendChild(document.createTextNode(" ")); d.appendChild(drop);
      } else {
        var n = document.createElement("p"); n.className = "small"; n.textContent = "電波が戻ると自動で送ります（二重には記録されません）。"; d.appendChild(n);
      }
      box.appendChild(d);
    });
    main.insertBefore(box, main.firstChild);
  }
  function setState(key, state, reason) {
    var q = readQueue();
    q.forEach(function (x) { if (x.key === key) { x.state = state; x.reason = reason; } });
    writeQueue(q);
  }

  function sentNotice(item) {
    var main = document.querySelector("main");
    if (!main) return;
    var p = document.createElement("p"); p.className = "flash"; p.setAttribute("role", "status");
    p.textContent = "保存していた記録を送信しました：" + item.summary;
    main.insertBefore(p, main.firstChild);
  }

  /* A request that has not answered in SEND_TIMEOUT_MS counts as no network (a venue's Wi-Fi with no way to
     the server can hold it for minutes): the record stays kept, and a later send is the server's replay of
     the same key if this one did land. */
  var SEND_TIMEOUT_MS = 10000;
  function timedFetch(url, options) {
    if (typeof AbortController === "undefined") return fetch(url, options);
    var ctl = new AbortController(), t = setTimeout(function () { ctl.abort(); }, SEND_TIMEOUT_MS);
    options = Object.assign({ signal: ctl.signal }, options || {});
    return fetch(url, options).then(function (r) { clearTimeout(t); return r; }, function (e) { clearTimeout(t); throw e; });
  }

  /* The form check's token of the session as it is now (a kept form may carry an older session's). */
  function freshToken(action) {
    return timedFetch(action, { credentials: "same-origin" }).then(function (res) {
      if (!res.ok || res.url.indexOf("/signin") >= 0) return null;
      return res.text().then(function (html) {
        var input = new DOMParser().parseFromString(html, "text/html").querySelector("input[name=csrf_token]");
        return input ? input.value : null;
      });
    }, function () { return null; });
  }

  var flushing = false;
  var flushAgain = false;  /* a record queued while a flush runs is sent when it ends (it waited for a signal) */
  function flush() {
    if (flushing) { flushAgain = true; return Promise.resolve(); }
    var pending = readQueue().filter(function (x) { return x.state === "pending"; });
    if (!pending.length) return Promise.resolve();
    flushing = true;
    var landed = null, tokens = {};
    return pending.reduce(function (chain, item) {
      return chain.then(function (stop) {
        if (stop) return true;
        var token = tokens[item.action] !== undefined ? Promise.resolve(tokens[item.action]) : freshToken(item.action);
        return token.then(function (t) {
          tokens[item.action] = t;
          var fields = item.fields.map(function (f) { return f[0] === "csrf_token" && t ? [f[0], t] : f; });
          return timedFetch(item.action, { method: "POST", credentials: "same-origin", redirect: "follow",
            headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() });
        })
          .then(function (res) {
            if (res.ok && res.redirected && res.url.indexOf("/signin") < 0) {
              writeQueue(readQueue().filter(function (x) { return x.key !== item.key; }));
              if (item.navigate && location.pathname === item.action) landed = res.url;
              else sentNotice(item);
              return false;
            }
            if (res.redirected && res.url.indexOf("/signin") >= 0) {
              setState(item.key, "pending", "サインインが切れています。サインインすると送ります。");
              return true;
            }
            if (res.status >= 500) return true;
            return res.text().then(function (html) {
              var doc = new DOMParser().parseFromString(html, "text/html");
              var msg = doc.querySelector("[role=alert]") || doc.querySelector("main p.notice") || doc.querySelector("main p");
              setState(item.key, "refused", msg ? msg.textContent.trim() : "サーバーが受け付けませんでした（" + res.status + "）");
              return false;
            });
          }, function () { return true; /* still no network: keep it */ });
      });
    }, Promise.resolve(false)).then(function () {
      flushing = false;
      /* again only for a record still to send: a second run with nothing pending would end before it told the
         page's own record's outcome (left at 送信しています…, its box hidden) */
      if (flushAgain && !landed && navigator.onLine && readQueue().some(function (x) { return x.state === "pending"; })) {
        flushAgain = false; return flush();
      }
      flushAgain = false;
      if (sendingNow && !landed) {  /* it did not land: show it as kept, and say so where 送信しています… was */
        var mine = readQueue().filter(function (x) { return x.key === sendingNow; })[0];
        sendingNow = null; renderQueue();
        if (whenKept) { whenKept(!!mine && mine.state === "refused"); whenKept = null; }
      }
      if (landed) {
        try { sessionStorage.setItem("judgeapp.sent", "記録しました（サーバーに届きました）"); } catch (e) { /* no note */ }
        location.assign(landed);
      }
    });
  }

  function summaryOf(form) {
    var who = form.querySelector("p strong");
    var lv = form.querySelector("select[name=level]");
    var round = form.querySelector("[name=round]");
    return (who ? who.textContent : "") + "・第 " + (round ? round.value : "?") + " ラウンド・" +
      (lv && lv.selectedIndex >= 0 ? lv.options[lv.selectedIndex].textContent : "");
  }

  function queueForm(form, navigate) {
    var fields = [];
    new FormData(form).forEach(function (v, k) { if (k !== "action" && k !== "upgrade") fields.push([k, v]); });
    fields.push(["action", "confirm"]);
    var key = form.querySelector("input[name=idempotency_key]").value;
    var q = readQueue().filter(function (x) { return x.key !== key; });
    q.push({ key: key, action: form.getAttribute("action") || location.pathname, fields: fields, state: "pending", reason: "",
             summary: summaryOf(form), facts: (form.querySelector("[name=facts]") || {}).value || "", at: Date.now(), navigate: navigate });
    writeQueue(q);
    if (navigator.serviceWorker && navigator.serviceWorker.ready) {
      navigator.serviceWorker.ready.then(function (r) { if (r.sync) r.sync.register("record-queue").catch(function () {}); });
    }
  }

  function setupRecordForm() {
    var keyInput = document.querySelector("main form input[name=idempotency_key]");
    if (!keyInput) return;
    var form = keyInput.form;
    form.setAttribute("action", location.pathname);
    if (servedOffline() || !keyInput.value) {
      keyInput.value = newKey(); /* a kept copy's key was used before: each record gets its own */
      var params = new URLSearchParams(location.search);
      form.querySelectorAll("input[type=hidden][name^='a.'], input[type=hidden][name=infraction]").forEach(function (i) { i.remove(); });
      params.forEach(function (v, k) {
        if (k === "infraction" || k.indexOf("a.") === 0) {
          var h = document.createElement("input"); h.type = "hidden"; h.name = k; h.value = v; form.appendChild(h);
        }
      });
    }
    form.addEventListener("submit", function (e) {
      var action = e.submitter && e.submitter.name === "action" ? e.submitter.value : (e.submitter && e.submitter.name === "upgrade" ? "upgrade" : "");
      if (action === "confirm" || action === "upgrade") {
        if (action === "upgrade" && !servedOffline() && navigator.onLine) return; /* upgrades go as they are */
        e.preventDefault();
        if (navigator.onLine) sendingNow = form.querySelector("input[name=idempotency_key]").value;
        queueForm(form, true);
        form.hidden = true;
        var note = document.createElement("p"); note.className = "notice"; note.setAttribute("role", "status");
        form.parentNode.insertBefore(note, form);
        var kept = function (refused) {  /* refused: it reached the server, which did not take it (it waits for the judge) */
          note.textContent = refused
            ? "サーバーが受け付けませんでした。記録は端末に残しています。下の理由を確かめて、送り直すか破棄してください。"
            : navigator.onLine
            ? "サーバーに届きませんでした。記録は「未送信」として端末に保存しました。届くようになると自動で送ります。"
            : "電波がありません。記録は「未送信」として端末に保存しました。電波が戻ると自動で送ります。";
          var ev = location.pathname.match(/^\/events\/\d+/);
          if (!ev || document.getElementById("record-another")) return;
          var back = document.createElement("p");
          var link = document.createElement("a"); link.className = "button secondary"; link.href = ev[0] + "/record";
          link.id = "record-another"; link.textContent = "別の選手に記録する"; back.appendChild(link);
          form.parentNode.insertBefore(back, form);
        };
        if (!navigator.onLine) { kept(); return; }
        note.textContent = "送信しています…";
        whenKept = kept;
        flush();
        return;
      }
      if (!navigator.onLine || servedOffline()) {
        e.preventDefault();
        if (!form.reportValidity()) return;
        if (form.querySelector("button[name=action][value=confirm]")) return;
        var panel = document.createElement("div"); panel.className = "notice";
        panel.textContent = "電波がないため、累積の確認はできません。このまま記録すると端末に保存し、電波が戻ったら送ります。";
        var b = document.createElement("button"); b.type = "submit"; b.name = "action"; b.value = "confirm"; b.textContent = "この内容で記録する（未送信で保存）";
        panel.appendChild(document.createElement("br")); panel.appendChild(b);
        form.appendChild(panel);
      }
    });
  }

  /* The deck check runs on the server: with no signal, say so instead of the browser's error page. */
  function setupDeckForm() {
    var form = document.querySelector("main form.deck");
    if (!form) return;
    form.addEventListener("submit", function (e) {
      if (navigator.onLine && !servedOffline()) return;
      e.preventDefault();
      var old = document.getElementById("deck-offline"); if (old) old.remove();
      var p = document.createElement("p"); p.className = "notice"; p.id = "deck-offline"; p.setAttribute("role", "alert");
      p.textContent = "電波がないため、デッキチェックはできません（チェックはサーバーで行います）。入力したリストは消えません。電波が戻ったら「チェックする」を押してください。";
      form.parentNode.insertBefore(p, form);
    });
  }

  /* --- the game chosen last ---------------------------------------------------------------------
     The server keeps it in a cookie (a page that names a game sets it); offline no request sets it, so the
     page keeps it too, for the offline lookup across games (offline-search.js puts that game first). */
  function rememberGame() {
    var m = location.pathname.match(/^\/(?:wizard|rules|training)\/([a-z0-9-]+)(?:\/|$)/);
    var params = new URLSearchParams(location.search), game = m ? m[1] : params.get("game");
    try {
      if (game && game !== "lookup") localStorage.setItem("judgeapp.game", game);
      else if (location.pathname === "/search" && params.has("game") && !game) localStorage.removeItem("judgeapp.game"); /* すべてのゲーム */
    } catch (e) { /* not kept */ }
  }

  document.addEventListener("DOMContentLoaded", function () {
    rememberGame();
    setupTheme();
    setupDeckForm();
    setupWorker();
    setupCopy();
    anchors();
    highlight();
    if (document.querySelector("main ol.results")) rememberMarks();
    setupRecordForm();
    renderQueue();
    applyWorkerOutcomes().then(function () { if (navigator.onLine) flush(); });
    var sent = null;
    try { sent = sessionStorage.getItem("judgeapp.sent"); sessionStorage.removeItem("judgeapp.sent"); } catch (e) { /* none */ }
    if (sent && document.querySelector("main")) {
      var p = document.createElement("p"); p.className = "flash"; p.setAttribute("role", "status"); p.textContent = sent;
      document.querySelector("main").insertBefore(p, document.querySelector("main").firstChild);
    }
  });
  /* A page served from the device stays the kept copy when the signal comes back: say so, with the way to
     the latest (a judge read the banner as still offline). */
  function backOnline() {
    var b = document.getElementById("offline-banner");
    if (!servedOffline() || document.getElementById("back-online")) return;
    var a = document.createElement("a"); a.id = "back-online"; a.className = "tap"; a.href = location.href;
    a.textContent = "電波が戻りました。最新の内容を表示する";
    b.appendChild(document.createTextNode(" ")); b.appendChild(a);
  }
  window.addEventListener("online", function () { backOnline(); flush(); });
  /* Online with records still kept (the server did not answer, or a send failed mid-way): try again now and
     then, not only when an "online" event comes (it never does while the phone stays online). */
  setInterval(function () {
    if (navigator.onLine && readQueue().some(function (x) { return x.state === "pending"; })) flush();
  }, 30000);
  window.addEventListener("storage", function (e) { if (e.key === QUEUE_KEY) renderQueue(); });
  window.judgeappQueue = { read: readQueue, flush: flush };
})();
