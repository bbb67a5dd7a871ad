"""Judging with a stored configuration: the database response cache and the egress policy in force, around the pure
client (`grading.judges.client`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from grading.models import judge_egress_policy

from . import client
from .client import JudgeInput, JudgeResult
from .db_cache import DatabaseResponseCache


def judge_batch(
    config, items: Sequence[JudgeInput], *, sleep: Callable[[float], None] = time.sleep
) -> list[JudgeResult]:
    """Judge completions with a judge VerifierConfig, cached in the database, only where the egress policy allows."""
    return client.judge_batch(config, items, policy=judge_egress_policy(), cache=DatabaseResponseCache(), sleep=sleep)


def judge_completion(
    config, *, question: str, reference: str, completion: str, sleep: Callable[[float], None] = time.sleep
) -> JudgeResult:
    return judge_batch(config, [JudgeInput(question, reference, completion)], sleep=sleep)[0]
