"""A judge's concurrency limit shared by every worker process through leases in the database."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from grading.judges import limits
from grading.models import JudgeCallLease, VerifierConfig

pytestmark = pytest.mark.django_db


@pytest.fixture
def judge():
    return VerifierConfig.objects.create(name="shared-judge", kind=VerifierConfig.Kind.RULE, concurrency_limit=10)


def renew(judge, holder, *, wanted, in_flight=0, paused_until=None):
    return limits.renew(
        judge.pk,
        holder,
        limit=judge.concurrency_limit,
        wanted=wanted,
        in_flight=in_flight,
        timeout_seconds=5,
        paused_until=paused_until,
    )


def recorded(judge) -> dict[str, int]:
    return dict(JudgeCallLease.objects.filter(verifier=judge).values_list("holder", "granted"))


def test_one_holder_takes_what_it_wants_up_to_the_limit(judge):
    assert renew(judge, "a", wanted=4).granted == 4
    assert renew(judge, "a", wanted=50).granted == 10
    assert recorded(judge) == {"a": 10}


def test_the_shares_never_add_up_to_more_than_the_limit_and_converge_to_fair(judge):
    assert renew(judge, "a", wanted=10, in_flight=0).granted == 10
    second = renew(judge, "b", wanted=10)
    assert second.granted == 0 and sum(recorded(judge).values()) <= 10
    # a steps down to its fair share, but never records less than it has in flight
    first = renew(judge, "a", wanted=10, in_flight=8)
    assert first.granted == 5 and recorded(judge)["a"] == 8
    assert renew(judge, "b", wanted=10).granted == 2 and sum(recorded(judge).values()) == 10
    renew(judge, "a", wanted=10, in_flight=5)
    assert renew(judge, "b", wanted=10).granted == 5
    assert recorded(judge) == {"a": 5, "b": 5}
    for _ in range(3):
        for holder in ("a", "b"):
            renew(judge, holder, wanted=10, in_flight=recorded(judge)[holder])
            assert sum(recorded(judge).values()) <= 10


def test_a_holder_that_stops_renewing_is_forgotten_after_the_lease(judge):
    renew(judge, "dead", wanted=10)
    assert renew(judge, "alive", wanted=10).granted == 0
    JudgeCallLease.objects.filter(holder="dead").update(
        renewed_at=timezone.now() - limits.lease_expiry(5) - timedelta(seconds=1)
    )
    assert renew(judge, "alive", wanted=10).granted == 10
    assert set(recorded(judge)) == {"alive"}


def test_a_pause_heard_by_one_holder_reaches_the_others(judge):
    until = timezone.now() + timedelta(seconds=30)
    renew(judge, "a", wanted=3, paused_until=until)
    assert 25 < renew(judge, "b", wanted=3).paused_for <= 30


def test_the_requests_per_minute_split_follows_the_shares(judge):
    renew(judge, "a", wanted=6)
    share = renew(judge, "b", wanted=4)
    assert share.granted == 4 and share.share == pytest.approx(0.4)


def test_release_gives_the_share_back(judge):
    renew(judge, "a", wanted=10)
    limits.release(judge.pk, "a")
    assert renew(judge, "b", wanted=10).granted == 10
