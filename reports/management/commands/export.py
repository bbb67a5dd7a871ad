"""Export an annotation project's final labels as a bundle, in this process, and write the zip to a path."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import AnnotationProject
from reports import services
from reports.exports import FILE_TYPES, export_format_names
from reports.exports.manifest import rows_summary
from reports.models import ExportJob


class Command(BaseCommand):
    help = (
        "Build an export bundle (data files, manifest.json, README.md) of a correctness project's final human "
        "labels and write the zip to --out. Runs synchronously, as the Celery job would."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", type=int, required=True, help="annotation project id")
        parser.add_argument("--format", required=True, help=f"one of: {', '.join(export_format_names())}")
        parser.add_argument(
            "--file-types",
            nargs="+",
            default=["jsonl"],
            choices=FILE_TYPES,
            help="data files to write (default: jsonl)",
        )
        parser.add_argument("--seed", type=int, help="seed of the random choices (default 0)")
        parser.add_argument("--per-type", type=int, help="VerifyBench: questions per coarse answer type (default 250)")
        parser.add_argument("--models", type=int, help="mu-MATH: author models per problem (default 4)")
        parser.add_argument("--options", default="", help="further builder options as a JSON object")
        parser.add_argument("--out", required=True, help="path of the zip to write")

    def handle(self, *args, **opts):
        project = AnnotationProject.objects.filter(pk=opts["project"]).first()
        if project is None:
            raise CommandError(f"no annotation project with id {opts['project']}")
        try:
            options = json.loads(opts["options"]) if opts["options"] else {}
        except json.JSONDecodeError as exc:
            raise CommandError(f"--options is not valid JSON: {exc.msg}") from None
        if not isinstance(options, dict):
            raise CommandError("--options must be a JSON object")
        for flag, name in (("seed", "seed"), ("per_type", "per_type"), ("models", "models")):
            if opts[flag] is not None:
                options[name] = opts[flag]
        out = Path(opts["out"])
        if not out.parent.is_dir():
            raise CommandError(f"{out.parent}: no such directory")
        try:
            job = services.create_export(
                project=project, format=opts["format"], file_types=opts["file_types"], options=options, enqueue=False
            )
        except services.ExportRequestError as exc:
            raise CommandError(str(exc)) from None
        job = services.run_export_now(job)
        if job.status != ExportJob.Status.SUCCEEDED:
            raise CommandError(f"export {job.pk} {job.status}: {job.error}")
        partial = out.with_name(f".{out.name}.part")
        shutil.copyfile(services.export_bundle(job), partial)
        os.replace(partial, out)
        counts = job.manifest["counts"]
        self.stdout.write(f"export {job.pk}: {rows_summary(counts)} -> {out} (sha256 {job.bundle_sha256})")
        for group, info in job.manifest["shortfalls"].items():
            self.stdout.write(f"shortfall {group}: {info['selected']} of {info['requested']} requested")
