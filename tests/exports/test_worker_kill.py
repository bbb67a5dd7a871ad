"""A real worker is SIGKILLed in the middle of an export; nothing is published, and a restart completes it.

Recovery is an explicit restart (`services.restart_export`), not broker redelivery: with the whole worker killed,
Redis hands an unacknowledged message out again only after the visibility timeout (an hour by default), and the
restarted job carries a new attempt number, so that late redelivery is ignored when it comes. The export is slowed
with the test-only option `chunk_delay` so that the kill lands mid-way.
"""

import zipfile

import pytest

from reports import services
from reports.exports import runner
from reports.models import ExportJob
from tests.waiting import wait_for


@pytest.mark.worker
def test_killed_worker_publishes_nothing_and_a_restart_completes_the_export(
    celery_worker_factory, verifybench_data, export_root
):
    export_root.mkdir(parents=True, exist_ok=True)
    env = {"EXPORT_ROOT": str(export_root)}
    worker = celery_worker_factory(env)
    job = services.create_export(
        project=verifybench_data.project,
        format="verifybench-hard",
        file_types=["jsonl", "csv", "parquet"],
        options={"chunk_size": 2, "chunk_delay": 0.4},
    )
    wait_for(lambda: ExportJob.objects.get(pk=job.pk).progress_done >= 4, what="the export to get going")
    worker.kill()

    job.refresh_from_db()
    assert job.status == ExportJob.Status.RUNNING
    assert 0 < job.progress_done < job.progress_total == 21
    assert services.export_bundle(job) is None
    assert not (export_root / runner.final_name(job)).exists()
    leftovers = list(export_root.glob(f".export-{job.pk}-*"))
    assert leftovers, "the killed run should have left its temporary files"

    services.restart_export(job, force=True)
    celery_worker_factory(env)
    job = wait_for(
        lambda: ExportJob.objects.filter(pk=job.pk, status__in=ExportJob.FINISHED).first(),
        what="the restarted export to finish",
    )
    assert job.status == ExportJob.Status.SUCCEEDED, job.error
    assert job.attempt == 2 and job.progress_done == 21
    # the run removed its working files before it said it succeeded (it used to after, which a loaded machine showed)
    assert sorted(path.name for path in export_root.iterdir()) == [runner.final_name(job)]
    with zipfile.ZipFile(services.export_bundle(job)) as bundle:
        lines = bundle.read("verifybench_hard.jsonl").decode().splitlines()
        assert len(lines) == 21 and len(set(lines)) == 21
        assert bundle.testzip() is None
