from django.apps import AppConfig
from django.db.models import Exists, OuterRef, Q
from django.db.models.signals import post_migrate


def count_projects_without_tallies(sender, verbosity: int = 1, **kwargs) -> None:
    """A database migrated from before the tallies (or the per-question counters, or the per-question vectors)
    existed gets them counted once, so no page shows zeros."""
    from . import aggregates
    from .models import AnnotationProject, GroupTally, Item, ProjectTally, VectorTally

    of_project = {"project": OuterRef("pk")}
    final = Item.objects.filter(**of_project, state="resolved", excluded=False, is_gold=False)
    missing = AnnotationProject.objects.filter(
        # no tallies at all, or (counted before the per-question counters existed) final labels and none of those
        Q(Exists(Item.objects.filter(**of_project)), ~Exists(ProjectTally.objects.filter(**of_project)))
        | Q(
            Exists(final),
            ~Exists(GroupTally.objects.filter(**of_project)),
            kind__in=aggregates.kinds_with_contributors(),
        )
        # counted before the per-question vectors existed: confusion counts of verdicts and no vector
        | Q(
            Exists(ProjectTally.objects.filter(**of_project, key__startswith="v|")),
            ~Exists(VectorTally.objects.filter(**of_project)),
        )
    ).order_by("pk")
    for project in missing.iterator():
        keys = aggregates.rebuild(project)
        if verbosity:
            print(f"  Counted the tallies of project {project.pk} ({project.name}): {keys} counters")


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"
    verbose_name = "Annotation workflow"

    def ready(self):
        from . import refit, setup, signals  # noqa: F401  (register the annotator-model and project-setup job kinds)

        signals.connect()

        post_migrate.connect(count_projects_without_tallies, sender=self)
