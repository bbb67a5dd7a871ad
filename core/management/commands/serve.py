"""Serve the app for development: the web server and, beside it, a Celery worker that runs every background job and
the one scheduler (Celery beat) that sends the periodic tasks (the job sweep, overdue webhook deliveries, search
documents). Ctrl-C stops all three; so does any of them stopping."""

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
    help = "Run the development web server, a Celery worker and the scheduler beside it; Ctrl-C stops all three."

    def add_arguments(self, parser):
        parser.add_argument("address", nargs="?", default="127.0.0.1:8000", help="host:port of the web server")
        parser.add_argument("--concurrency", type=int, default=4, help="jobs the worker runs at once")

    def handle(self, *args, **options):
        var = Path(settings.VAR_DIR)
        log, scheduler_log = var / "worker.log", var / "scheduler.log"
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        # Ctrl-C reaches this process only: each child runs in a session of its own and is stopped from here, so
        # none is left running when another has gone.
        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        celery = [sys.executable, "-m", "celery", "-A", "config"]
        worker = subprocess.Popen(
            [
                *celery,
                "worker",
                "--pool=threads",
                f"--concurrency={options['concurrency']}",
                "--loglevel=info",
                "--logfile",
                str(log),
            ],
            start_new_session=True,
        )
        self.stdout.write(f"Worker started (pid {worker.pid}, log {log}).")
        scheduler = subprocess.Popen(
            [
                *celery,
                "beat",
                "--loglevel=info",
                "--schedule",
                str(var / "celerybeat-schedule"),
                "--logfile",
                str(scheduler_log),
            ],
            start_new_session=True,
        )
        self.stdout.write(f"Scheduler started (pid {scheduler.pid}, log {scheduler_log}).")
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", options["address"]],
            start_new_session=True,
        )
        processes = {"web server": server, "worker": worker, "scheduler": scheduler}
        while not stopping and all(process.poll() is None for process in processes.values()):
            time.sleep(0.3)
        if not stopping:
            gone = next(name for name, process in processes.items() if process.poll() is not None)
            self.stderr.write(
                f"The {gone} stopped (exit {processes[gone].returncode}); stopping the rest. "
                f"Logs: {log}, {scheduler_log}"
            )
        for process in processes.values():
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in processes.values():
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()
        self.stdout.write("Stopped the web server, the worker and the scheduler.")


def _signal_group(process: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        pass
