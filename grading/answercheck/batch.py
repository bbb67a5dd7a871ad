"""Verify many completions at once, deciding each distinct (reference, answer, type) only once."""

from __future__ import annotations

import hashlib
import multiprocessing
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache

from grading.answercheck.core import (
    completion_final_answer,
    decide,
    hedged,
    question_for_comparison,
    reference_final_answer,
    resolve_answer_type,
)
from grading.answercheck.deadline import DeadlineExceeded, run_with_deadline
from grading.answercheck.extract import extract_final_answer
from grading.answercheck.verdict import INCONCLUSIVE, CheckResult, Comparison


@dataclass(frozen=True)
class BatchItem:
    completion: str
    reference: str
    answer_type: str | None = None
    question: str | None = None
    reference_is_solution: bool = False

    @classmethod
    def from_mapping(cls, row: Mapping) -> BatchItem:
        return cls(
            completion=row.get("completion") or "",
            reference=row.get("reference", row.get("answer")) or "",
            answer_type=row.get("answer_type") or None,
            question=row.get("question") or None,
            reference_is_solution=bool(row.get("reference_is_solution", False)),
        )


@dataclass(frozen=True)
class _Prepared:
    reference_answer: str | None
    code: str | None
    detected: bool
    extracted: str | None
    seconds: float = 0.0
    timed_out: bool = False


@lru_cache(maxsize=65536)
def _reference_side(reference: str, reference_is_solution: bool, answer_type: str | None, question: str | None):
    reference_answer = reference_final_answer(
        reference, reference_is_solution=reference_is_solution, answer_type=answer_type
    )
    if reference_answer is None:
        return None, None, False
    code, detected = resolve_answer_type(answer_type, reference_answer, question)
    return reference_answer, code, detected


def _prepare(item: BatchItem) -> _Prepared:
    reference_answer, code, detected = _reference_side(
        item.reference,
        item.reference_is_solution,
        item.answer_type,
        item.question if item.answer_type is None else None,
    )
    if code is None:
        return _Prepared(None, None, False, extract_final_answer(item.completion))
    return _Prepared(reference_answer, code, detected, completion_final_answer(item.completion, code))


def _decide_key(key: tuple, timeout: float) -> Comparison:
    extracted, reference_answer, code, question = key
    return decide(extracted, reference_answer, code, question, timeout)


def _decide_many(keys: list[tuple], budgets: list[float]) -> list[Comparison]:
    return [_decide_key(key, budget) for key, budget in zip(keys, budgets)]


def _prepare_timed(item: BatchItem, timeout: float) -> _Prepared:
    """_prepare under the item's deadline (extraction is linear, but nothing runs unbounded)."""
    started = time.monotonic()
    try:
        if threading.current_thread() is threading.main_thread():
            ready = run_with_deadline(_prepare, item, timeout=timeout)
        else:
            ready = _prepare(item)
    except DeadlineExceeded:
        return _Prepared(None, None, False, None, timeout, True)
    return replace(ready, seconds=time.monotonic() - started)


def _prepare_many(items: list[BatchItem], timeout: float) -> list[_Prepared]:
    return [_prepare_timed(item, timeout) for item in items]


def _item_key(item: BatchItem) -> bytes:
    """A digest of everything the reading of an item depends on (the texts themselves are not kept)."""
    digest = hashlib.blake2b(digest_size=16)
    for part in (item.completion, item.reference, item.answer_type or "", item.question or ""):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00\xff")
    digest.update(b"s" if item.reference_is_solution else b"a")
    return digest.digest()


def _pool(workers: int):
    """A process pool whose workers start with the verifier already imported (sympy and the LaTeX
    parser take seconds to import; each fresh worker used to pay that again, which made two workers
    slower than one on a few thousand rows).

    A process running a single thread forks its workers directly: they start in milliseconds and
    inherit its warm parse caches. With other threads running, forking is unsafe (a lock held by
    another thread stays held in the child), so the workers come from a fork server that has
    imported the verifier once; it starts with the first pool and serves every later one."""
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork").Pool(workers)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["grading.answercheck.core", "grading.answercheck.batch"])
    return context.Pool(workers)


def _chunks(values: list, size: int) -> list[list]:
    return [values[start : start + size] for start in range(0, len(values), size)]


def verify_batch(
    items: Iterable[BatchItem | Mapping],
    *,
    timeout: float = 5.0,
    workers: int = 1,
    chunk_size: int = 200,
) -> list[CheckResult]:
    """Check results in input order. `workers` > 1 spreads extraction and comparisons over processes.

    Rows may be BatchItem or mappings with completion, reference (or answer), answer_type,
    question and reference_is_solution.
    """
    batch = [item if isinstance(item, BatchItem) else BatchItem.from_mapping(item) for item in items]
    # Identical rows (the same completion sampled again for the same question) are read once.
    unique = list(dict.fromkeys(batch))
    # ... and an item this process has read before (in an earlier chunk of a run) is not read again
    unique_keys = [_item_key(item) for item in unique]
    unread = [index for index, key in enumerate(unique_keys) if key not in _READ]
    to_read = [unique[index] for index in unread]
    pool = _pool(workers) if workers > 1 and len(to_read) > chunk_size else None
    try:
        if pool is not None:
            fresh = [
                p
                for part in pool.starmap(_prepare_many, [(chunk, timeout) for chunk in _chunks(to_read, chunk_size)])
                for p in part
            ]
        else:
            fresh = _prepare_many(to_read, timeout)
        read_now = {unique_keys[index]: ready for index, ready in zip(unread, fresh)}
        _remember_readings(read_now)
        by_item = {item: read_now[key] if key in read_now else _READ[key] for item, key in zip(unique, unique_keys)}
        prepared = [by_item[item] for item in batch]
        # Each distinct comparison gets what is left of the deadline after the slowest extraction
        # among the items that share it.
        item_keys = [
            _key(item, ready) if ready.code is not None and ready.extracted is not None else None
            for item, ready in zip(batch, prepared)
        ]
        keys: dict[tuple, float] = {}
        known: dict[tuple, Comparison] = {}
        for key, ready in zip(item_keys, prepared):
            if key is None:
                continue
            remembered = _DECIDED.get(key)
            if remembered is not None:
                known[key] = remembered
            else:
                keys[key] = max(keys.get(key, 0.0), ready.seconds)
        # Grouping by reference keeps each worker's parse cache warm.
        distinct = sorted(keys, key=lambda key: (key[2], key[1], key[0], key[3] or ""))
        budgets = [max(0.01, timeout - keys[key]) for key in distinct]
        if pool is not None and len(distinct) > chunk_size:
            size = max(1, min(chunk_size, len(distinct) // (workers * 8) or 1))
            parts = pool.starmap(
                _decide_many, [(part, budget) for part, budget in zip(_chunks(distinct, size), _chunks(budgets, size))]
            )
            outcomes = [outcome for part in parts for outcome in part]
        else:
            outcomes = _decide_many(distinct, budgets)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    decided = dict(zip(distinct, outcomes))
    _remember(decided)
    decided.update(known)
    return [
        _verdict(item, ready, decided[key] if key is not None else None)
        for item, ready, key in zip(batch, prepared, item_keys)
    ]


# Decisions already made in this process, for the next batches: a run verifies its scope a chunk at a time, and the
# samples of one question repeat the same few answers across chunks. Only a decided comparison is kept (never a
# timeout or a failure, which a later batch may decide).
_DECIDED: dict[tuple, Comparison] = {}
_DECIDED_LIMIT = 200_000


# Readings (extracted answer, resolved type) of the items this process has read, by a digest of the item; only those
# read within their deadline.
_READ: dict[bytes, _Prepared] = {}
_READ_LIMIT = 200_000


def _remember_readings(read: dict[bytes, _Prepared]) -> None:
    if len(_READ) + len(read) > _READ_LIMIT:
        _READ.clear()
    _READ.update((key, ready) for key, ready in read.items() if not ready.timed_out)


def _remember(decided: dict[tuple, Comparison]) -> None:
    if len(_DECIDED) + len(decided) > _DECIDED_LIMIT:
        _DECIDED.clear()
    _DECIDED.update((key, outcome) for key, outcome in decided.items() if outcome.status != INCONCLUSIVE)


def _key(item: BatchItem, ready: _Prepared) -> tuple:
    return (
        ready.extracted,
        ready.reference_answer,
        ready.code,
        question_for_comparison(ready.code, item.question, ready.extracted, ready.reference_answer),
    )


def _verdict(item: BatchItem, ready: _Prepared, comparison: Comparison | None) -> CheckResult:
    if ready.timed_out:
        return CheckResult(INCONCLUSIVE, None, None, None, "verification timed out while reading the answers")
    if ready.reference_answer is None:
        return CheckResult(INCONCLUSIVE, ready.extracted, None, None, "no final answer in the reference")
    type_note = f"{ready.code} ({'detected' if ready.detected else 'given'})"
    if ready.extracted is None:
        return CheckResult(
            INCONCLUSIVE,
            None,
            ready.reference_answer,
            ready.code,
            f"no final answer found in the completion; type {type_note}",
        )
    if hedged(ready.extracted, ready.code):
        return CheckResult(
            INCONCLUSIVE,
            ready.extracted,
            ready.reference_answer,
            ready.code,
            f"the completion offers several candidate answers ({ready.extracted!r}); type {type_note}",
        )
    assert comparison is not None  # every item with a type and an extracted answer has its key decided
    explanation = (
        f"extracted {ready.extracted!r} from the completion and {ready.reference_answer!r} from the reference; "
        f"compared as {type_note}: {comparison.explanation}"
    )
    return CheckResult(comparison.status, ready.extracted, ready.reference_answer, ready.code, explanation)
