"""gunicorn settings for the web processes (docs/deployment.md): `gunicorn -c deploy/gunicorn.conf.py config.wsgi`.

Requests are short (jobs run on workers, never in a request), so a few synchronous workers per core suffice; the
sizing in docs/deployment.md comes from bench/annotate_load.py."""

import multiprocessing
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("GUNICORN_WORKERS", str(2 * multiprocessing.cpu_count() + 1)))
worker_class = "sync"
timeout = 60
graceful_timeout = 30
# A worker process is replaced after this many requests, so slow growth of memory never accumulates.
max_requests = 2000
max_requests_jitter = 200
# The reverse proxy in front sets X-Forwarded-For / X-Forwarded-Proto; it is the only client gunicorn trusts.
forwarded_allow_ips = os.environ.get("GUNICORN_FORWARDED_ALLOW_IPS", "127.0.0.1")
accesslog = "-"
errorlog = "-"
