"""Page weights on a cold cache, the size of the full offline precache, and the time a cold phone needs to
become offline-ready at 1 Mbit/s (Chromium's network emulation over CDP, applied to the page and to the
service worker). Run: .venv/bin/python bench/offline_bench.py"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PAGES = ["/", "/search?q=遅刻", "/rules/tcg-taikai/floor-rules/6b-iii", "/rules/tcg-taikai/floor-rules",
         "/wizard/lycee", "/wizard/lycee/late-seat", "/decks", "/training/lycee"]
MBIT = 1_000_000 / 8  # bytes per second


def main() -> None:
    import tempfile

    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    from judgeapp import create_app

    tmp = tempfile.mkdtemp()
    app = create_app({"SECRET_KEY": "bench", "INDEX_DIR": f"{tmp}/ix", "SITUATION_INDEX_DIR": f"{tmp}/six",
                      "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite"})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    client = app.test_client()
    urls = client.get("/offline/precache.json").get_json()["urls"]
    total_raw = total_enc = 0
    for u in urls:
        r = client.get(u, headers={"Accept-Encoding": "br, gzip"})
        total_enc += len(r.data)
        total_raw += len(client.get(u).data)
    print(f"precache: {len(urls)} URLs, {total_enc / 1024:.0f} KB transferred (br), {total_raw / 1024:.0f} KB "
          f"uncompressed")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        print("| page | transferred cold (KB) | of which HTML (KB) |\n| --- | --- | --- |")
        for path in PAGES:
            ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                      service_workers="block")
            page = ctx.new_page()
            sizes: list[tuple[str, int]] = []
            page.on("requestfinished", lambda req: sizes.append(
                (req.resource_type, req.sizes()["responseBodySize"] + req.sizes()["responseHeadersSize"])))
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
            html = sum(s for t, s in sizes if t == "document")
            print(f"| `{path}` | {sum(s for _, s in sizes) / 1024:.1f} | {html / 1024:.1f} |")
            ctx.close()
        ctx = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        conditions = {"offline": False, "latency": 150, "downloadThroughput": MBIT, "uploadThroughput": MBIT}
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", conditions)
        t0 = time.perf_counter()
        page.goto(base + "/")
        page.wait_for_function("navigator.serviceWorker.controller !== undefined")
        while not page.evaluate("caches.match('/offline/ready').then(r => !!r)"):
            time.sleep(0.25)
        elapsed = time.perf_counter() - t0
        n = len(urls)
        print(f"offline-ready after {elapsed:.1f} s with the page throttled to 1 Mbit/s and 150 ms (the worker's own "
              f"requests are not throttled by the page's emulation); at 1 Mbit/s the precache's bytes alone take "
              f"{total_enc / MBIT:.1f} s, and {n} requests 4 at a time at 150 ms add {n / 4 * 0.15:.1f} s: "
              f"about {total_enc / MBIT + n / 4 * 0.15:.0f} s in all")
        ctx.close()
        browser.close()
    server.shutdown()


if __name__ == "__main__":
    main()
