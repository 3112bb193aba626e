/* Before the page paints: the judge's remembered light/dark choice (else the phone's setting). */
(function () {
  try {
    var t = localStorage.getItem("theme");
    if (t === "dark" || t === "light") document.documentElement.setAttribute("data-theme", t);
  } catch (e) { /* storage blocked: follow the phone */ }
})();
