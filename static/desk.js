// The head judge's desk, live: the server says "something changed" over Server-Sent Events and the desk
// fetches its live part again. Without JavaScript (or when the stream is refused) a reload shows the same.
(function () {
  "use strict";
  var box = document.getElementById("desk-live");
  if (!box || !window.EventSource || !window.fetch) { return; }
  var fragmentUrl = box.getAttribute("data-fragment");
  var streamUrl = box.getAttribute("data-stream");
  var busy = false, again = false, poll = null;

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(fragmentUrl, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var tmp = document.createElement("div");
        tmp.innerHTML = html;
        var fresh = tmp.querySelector("#desk-live");
        if (fresh) { box.innerHTML = fresh.innerHTML; }
        box.setAttribute("data-updated", String(Date.now()));
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  function connect() {
    var es = new EventSource(streamUrl);
    es.addEventListener("hello", function () {
      box.setAttribute("data-live", "on");
      if (poll) { clearInterval(poll); poll = null; }
      refresh();  // what changed while no stream was open (the page's load, a reconnect) is announced to none
    });
    es.addEventListener("change", refresh);
    es.onerror = function () {
      box.setAttribute("data-live", "off");
      if (es.readyState === EventSource.CLOSED) {  // refused (no stream to spare): reload every 5 s
        if (!poll) { poll = setInterval(refresh, 5000); }
        setTimeout(connect, 15000);
      }
    };
  }
  connect();
}());
