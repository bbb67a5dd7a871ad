"""Demo step of the benchmark data: the demo VerifyBench dataset, imported like any file."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from core.demo import DemoContext, register_demo_step

from .models import Dataset
from .services import import_jsonl, index_search_documents

DEMO_DATASET_NAME = "demo"
DEMO_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo" / "verifybench_demo.jsonl"


@register_demo_step(order=20)
def import_demo_dataset(context: DemoContext) -> None:
    report = import_jsonl(
        dataset_name=DEMO_DATASET_NAME,
        source=DEMO_FILE,
        fmt="verifybench",
        created_by=context.users.get("researcher1"),
        source_name=DEMO_FILE.name,
        workspace=context.workspaces.get("answers"),
    )
    context.datasets[DEMO_DATASET_NAME] = Dataset.objects.get(name=DEMO_DATASET_NAME)
    index_search_documents()
    context.say(report.summary())
