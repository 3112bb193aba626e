"""The deploy's gunicorn settings (docs/deploy.md): `gunicorn -c python:judgeapp.gunicorn_conf 'judgeapp:create_app()'`.
bench/ starts gunicorn with exactly this file (only the address differs)."""

import os

bind = os.environ.get("JUDGEAPP_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("JUDGEAPP_WORKERS", os.cpu_count() or 2))  # one process per core
worker_class = "gthread"  # threads: an open desk's event stream holds one while the pages go on
threads = int(os.environ.get("JUDGEAPP_THREADS", 32))
keepalive = 5  # judges' phones send the next request on the same connection


def post_worker_init(worker):
    """The app is loaded (the search indexes, the corpus, the policies: some 170,000 objects that live as long
    as the process): move them out of the garbage collector's reach, so that a full collection, which walks
    every tracked object with the GIL held, takes microseconds instead of ~90 ms that every request of the
    worker would wait for. And SIGTERM (a service manager's stop or restart) ends the desks' streams too, as
    `worker_int` does: gunicorn then waits only for the requests in flight, not 30 s for the streams."""
    import gc
    import signal

    if os.environ.get("JUDGEAPP_GC_FREEZE", "1") != "0":
        gc.freeze()

    def exit_now(sig, frame):
        worker.handle_exit(sig, frame)  # gunicorn's own: stop taking connections, finish the requests
        _end_streams(worker)

    signal.signal(signal.SIGTERM, exit_now)


def worker_int(worker):
    """Ctrl+C (SIGINT) or SIGQUIT: the worker's open desk streams end now (the browsers reconnect), so that it
    exits at once instead of waiting for each stream's 55 s."""
    _end_streams(worker)


def _end_streams(worker):
    app = getattr(worker, "wsgi", None)
    if hasattr(app, "extensions"):
        from judgeapp.events.live import hub_for

        hub_for(app).stop()
