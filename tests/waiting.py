"""Polling for tests that watch a separate process (a Celery worker) change the database."""

import time


def wait_for(condition, timeout=60.0, what="condition"):
    """Call `condition` every 0.1 s until it returns something truthy, and return that; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")
