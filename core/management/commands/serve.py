"""Serve the app for development: the web server and, beside it, a Celery worker (with the job sweep) that runs every
background job. Ctrl-C stops both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

STOP_GRACE_SECONDS = 20


class Command(BaseCommand):
    help = "Run the development web server and a Celery worker beside it; Ctrl-C stops both."

    def add_arguments(self, parser):
        parser.add_argument("address", nargs="?", default="127.0.0.1:8000", help="host:port of the web server")
        parser.add_argument("--concurrency", type=int, default=4, help="jobs the worker runs at once")

    def handle(self, *args, **options):
        var = Path(settings.VAR_DIR)
        log = var / "worker.log"
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        # Ctrl-C reaches this process only: each child runs in a session of its own and is stopped from here, so
        # neither is left running when the other has gone.
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-B",
                "--pool=threads",
                f"--concurrency={options['concurrency']}",
                "--loglevel=info",
                "--schedule",
                str(var / "celerybeat-schedule"),
                "--logfile",
                str(log),
            ],
            start_new_session=True,
        )
        self.stdout.write(f"Worker started (pid {worker.pid}, log {log}).")
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", options["address"]],
            start_new_session=True,
        )
        while not stopping and server.poll() is None and worker.poll() is None:
            time.sleep(0.3)
        if not stopping:
            gone, code = (
                ("web server", server.returncode) if server.poll() is not None else ("worker", worker.returncode)
            )
            self.stderr.write(f"The {gone} stopped (exit {code}); stopping the rest. Worker log: {log}")
        for process in (server, worker):
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in (server, worker):
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()
        self.stdout.write("Stopped the web server and the worker.")


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
