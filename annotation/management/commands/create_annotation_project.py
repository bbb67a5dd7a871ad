from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from annotation import services
from annotation.models import ProjectMember
from core import subjects
from verifybench.models import Dataset


class Command(BaseCommand):
    help = "Create an annotation project over a dataset's completions (or questions, for answer types); prints its id."

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument(
            "--kind",
            required=True,
            choices=[kind.name for kind in subjects.all_kinds() if kind.subject_ids is not None],
        )
        parser.add_argument("--name", default="")
        parser.add_argument("--labels-per-item", type=int, default=2)
        parser.add_argument("--tiebreak-annotators", type=int, default=1)
        parser.add_argument("--lease-minutes", type=int, default=30)
        parser.add_argument("--show-model-names", action="store_true")
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--annotators", nargs="*", default=[], help="usernames to add as annotators")
        parser.add_argument("--adjudicators", nargs="*", default=[], help="usernames to add as adjudicators")

    def handle(self, *args, **options):
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        if options["labels_per_item"] < 1:
            raise CommandError("--labels-per-item must be at least 1")
        users = get_user_model().objects
        members = []
        for role, names in (
            (ProjectMember.Role.ANNOTATOR, options["annotators"]),
            (ProjectMember.Role.ADJUDICATOR, options["adjudicators"]),
        ):
            for name in names:
                user = users.filter(username=name).first()
                if user is None:
                    raise CommandError(f"no user named {name!r}")
                members.append((user, role))
        project = services.create_project(
            dataset=dataset,
            kind=options["kind"],
            name=options["name"],
            seed=options["seed"],
            labels_per_item=options["labels_per_item"],
            tiebreak_annotators=options["tiebreak_annotators"],
            lease_minutes=options["lease_minutes"],
            show_model_names=options["show_model_names"],
        )
        for user, role in members:
            services.add_member(project, user, role)
        self.stdout.write(str(project.pk))
