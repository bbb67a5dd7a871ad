from django.core.management.base import BaseCommand, CommandError

from annotation import aggregates
from annotation.models import AnnotationProject


class Command(BaseCommand):
    help = (
        "Recompute the tallies that researcher pages read (items by state, agreement, annotator counters, "
        "timeline) from every item and label, for one project or all. Labeling in that project waits meanwhile."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--project",
            type=int,
            action="append",
            default=[],
            help="a project id (repeatable); every project when left out",
        )

    def handle(self, *args, **options):
        projects = AnnotationProject.objects.order_by("pk")
        if options["project"]:
            projects = projects.filter(pk__in=options["project"])
            missing = set(options["project"]) - set(projects.values_list("pk", flat=True))
            if missing:
                raise CommandError(f"no project with id {', '.join(str(pk) for pk in sorted(missing))}")
        for project in projects.iterator():
            keys = aggregates.rebuild(project)
            self.stdout.write(f"project {project.pk} ({project.name}): {keys} tallies")
