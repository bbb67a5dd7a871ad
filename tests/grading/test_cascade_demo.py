"""The demo's cascade, run against the fake judge endpoint: `load_demo` creates it, and a run over the demo dataset
shows per-stage counts, precision against the demo's human labels and the judge's cost on the run page and the
meta-evaluation page."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse

from annotation.demo import CORRECTNESS_PROJECT
from annotation.models import AnnotationProject
from core import demo
from grading import runs
from grading.demo import DEMO_CASCADE, DEMO_JUDGE
from grading.models import Verdict, VerificationRun, VerifierConfig
from tests.conftest import allow_judge_endpoint
from verifybench.demo import DEMO_DATASET_NAME
from verifybench.models import Dataset

pytestmark = pytest.mark.django_db


def test_the_demo_cascade_runs_against_the_fake_judge_and_reports_its_stages(
    fake_openai, settings, monkeypatch, researcher, client
):
    settings.OPENAI_BASE_URL = fake_openai.base_url
    monkeypatch.setenv("OPENAI_API_KEY", "sk-demo-cascade")
    out = io.StringIO()
    demo.load_demo(out)
    assert f"Cascade {DEMO_CASCADE!r}" in out.getvalue()
    cascade = VerifierConfig.objects.get(name=DEMO_CASCADE)
    assert cascade.kind == "cascade" and cascade.cascade_judge.name == DEMO_JUDGE
    assert cascade.cascade_judge.base_url == fake_openai.base_url
    demo.load_demo(io.StringIO())
    assert VerifierConfig.objects.filter(name__in=[DEMO_CASCADE, DEMO_JUDGE]).count() == 2  # idempotent

    allow_judge_endpoint(fake_openai.base_url, cascade.cascade_judge.api_key_env)
    dataset = Dataset.objects.get(name=DEMO_DATASET_NAME)
    run = runs.create_run(verifier=cascade, dataset=dataset, enqueue=False)
    run = runs.execute_run(run.pk, run.attempt)
    assert run.status == VerificationRun.Status.SUCCEEDED, run.error

    report = runs.cascade_report(run)
    by_stage = {stage["stage"]: stage for stage in report["stages"]}
    verdicts = Verdict.objects.filter(verifier=cascade)
    assert report["total"] == run.total == verdicts.count()
    assert sum(stage["decided"] for stage in by_stage.values()) == report["total"]
    assert by_stage["rules"]["decided"] == verdicts.filter(stage="rules").count() > 0
    assert by_stage["judge"]["calls"] == verdicts.exclude(judge_status="").count() > 0
    assert report["tokens"] == sum(v.prompt_tokens + v.completion_tokens for v in verdicts) > 0
    assert report["cost"] == pytest.approx(float(sum(v.cost for v in verdicts))) and report["cost"] > 0
    assert by_stage["rules"]["labeled"] > 0 and by_stage["rules"]["precision"] is not None

    client.force_login(researcher)
    assert client.get(reverse("job-detail", args=["verification-run", run.pk])).status_code == 404  # not their team
    from django.contrib.auth.models import User

    client.force_login(User.objects.get(username="researcher1"))  # a researcher of the demo's answer-checking team
    html = client.get(reverse("job-detail", args=["verification-run", run.pk])).content.decode()
    assert 'data-testid="cascade-report"' in html
    assert f'<td class="number" data-field="decided">{by_stage["rules"]["decided"]}</td>' in html
    project = AnnotationProject.objects.get(name=CORRECTNESS_PROJECT)
    meta = client.get(reverse("meta-eval-page", args=[project.pk]), {"verifier": DEMO_CASCADE})
    assert meta.status_code == 200 and 'data-testid="cascade-stages"' in meta.content.decode()
