"""Page weights on a cold cache, the size of the full offline precache, and the time a cold phone needs to
become offline-ready at 1 Mbit/s (Chromium's network emulation over CDP, applied to the page and to the
service worker). Run: .venv/bin/python bench/offline_bench.py"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PAGES = [
    "/",
    "/search?q=遅刻",
    "/rules/tcg-taikai/floor-rules/6b-iii",
    "/rules/tcg-taikai/floor-rules",
    "/wizard/lycee",
    "/wizard/lycee/late-seat",
    "/decks",
    "/training/lycee",
]
MBIT = 1_000_000 / 8  # bytes per second


def main() -> None:
    import tempfile

    from playwright.sync_api import sync_playwright
    from werkzeug.serving import make_server

    from judgeapp import create_app

    tmp = tempfile.mkdtemp()
    app = create_app(
        {
            "SECRET_KEY": "bench",
            "INDEX_DIR": f"{tmp}/ix",
            "SITUATION_INDEX_DIR": f"{tmp}/six",
            "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite",
        }
    )
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    client = app.test_client()
    listing = client.get("/offline/precache.json").get_json()
    urls = listing["urls"]
    bundled = set(client.get(listing["bundle"]).get_json()["pages"])
    fetched = [listing["bundle"]] + [u for u in urls if u not in bundled]  # what the worker requests
    total_raw = total_enc = 0
    for u in fetched:
        r = client.get(u, headers={"Accept-Encoding": "br, gzip"})
        total_enc += len(r.data)
        total_raw += len(client.get(u).data)
    print(
        f"precache: {len(urls)} URLs ({len(bundled)} pages in one bundle), {len(fetched)} requests, "
        f"{total_enc / 1024:.0f} KB transferred (br), {total_raw / 1024:.0f} KB uncompressed"
    )
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium",
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        print("| page | transferred cold (KB) | of which HTML (KB) |\n| --- | --- | --- |")
        for path in PAGES:
            ctx = browser.new_context(
                viewport={"width": 390, "height": 844}, is_mobile=True, service_workers="block"
            )
            page = ctx.new_page()
            sizes: list[tuple[str, int]] = []
            page.on(
                "requestfinished",
                lambda req, sizes=sizes: sizes.append(
                    (req.resource_type, req.sizes()["responseBodySize"] + req.sizes()["responseHeadersSize"])
                ),
            )
            page.goto(base + path)
            page.wait_for_load_state("networkidle")
            html = sum(s for t, s in sizes if t == "document")
            print(f"| `{path}` | {sum(s for _, s in sizes) / 1024:.1f} | {html / 1024:.1f} |")
            ctx.close()
        browser.close()
    # The page and the service worker both throttled (the page's own emulation does not reach the worker).
    import json
    import subprocess

    script = str(Path(__file__).with_name("offline_ready.js"))
    out = subprocess.run(
        ["node", "--experimental-websocket", script, base, "1000", "150"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    print(
        f"cold phone at 1 Mbit/s, 150 ms (throttled targets: {', '.join(result['throttled'])}): "
        f"page usable after {result['usable_s']:.1f} s, "
        f"offline-ready after {result['offline_ready_s']:.1f} s; "
        f"the precache's bytes alone take {total_enc / MBIT:.1f} s at that speed"
    )
    server.shutdown()


if __name__ == "__main__":
    main()
