"""A selection for annotation: pick completions with a recipe, make a correctness project of them, keep the report."""

from __future__ import annotations

from django.db import transaction

from annotation import services as annotation_services
from annotation import setup as project_setup
from grading.models import SelectionRecord, VerifierConfig
from grading.runs import RunRequestError, clean_scope_filters

from . import recipes as selection
from . import selectors

DEFAULT_HARD_TARGET = 2000
# A selection of up to this many completions gets its items at once; a larger one gets them from a project-setup
# job (the project stays "preparing" until then), so the request never writes an unbounded number of rows.
INLINE_ITEMS = 2000


class SelectionRequestError(ValueError):
    """A selection request that cannot be carried out; the message says why."""


def select_for_annotation(
    *,
    dataset,
    strategy: str,
    verifiers: list[VerifierConfig],
    seed: int | None = None,
    target: int | None = None,
    routes=None,
    per_side: int = 2,
    min_minority: int = 2,
    strata=None,
    answer_types=None,
    domains=None,
    models=None,
    name: str = "",
    created_by=None,
    project_settings: dict | None = None,
):
    """Pick completions with a selection strategy, make a correctness project of them and keep the report.

    Returns (project, SelectionRecord). Nothing is created when the strategy picks nothing. Over INLINE_ITEMS picks
    the project's items come from a project-setup job queued when the caller's transaction commits
    (`annotation.setup.active_setup(project)` is that job while the project is preparing).
    """
    if strategy not in selection.STRATEGIES:
        raise SelectionRequestError(f"unknown strategy {strategy!r}; choose from {', '.join(selection.STRATEGIES)}")
    verifiers = list(dict.fromkeys(verifiers))
    foreign = [config.name for config in verifiers if config.workspace_id not in (None, dataset.workspace_id)]
    if foreign:
        raise SelectionRequestError(f"{', '.join(foreign)} belong(s) to another workspace than {dataset.name}")
    if not verifiers:
        raise SelectionRequestError("name at least one verifier configuration")
    if strategy == selection.VERIFYBENCH and len(verifiers) != 1:
        raise SelectionRequestError("the VerifyBench recipe uses exactly one verifier configuration")
    if strategy == selection.CASCADE and (len(verifiers) != 1 or verifiers[0].kind != VerifierConfig.Kind.CASCADE):
        raise SelectionRequestError("the cascade recipe uses exactly one cascade verifier configuration")
    try:
        cleaned = clean_scope_filters(answer_types, domains, models)
    except RunRequestError as exc:
        raise SelectionRequestError(str(exc)) from None
    filters = selection.SelectionFilters.of(cleaned["answer_types"], cleaned["domains"], cleaned["models"])
    candidates = selectors.selection_candidates(dataset, verifiers, filters)
    try:
        if strategy == selection.VERIFYBENCH:
            result = selection.verifybench_selection(
                candidates, verifier=verifiers[0].name, per_side=per_side, seed=seed, filters=filters
            )
        elif strategy == selection.CASCADE:
            result = selection.cascade_selection(
                candidates,
                verifier=verifiers[0].name,
                routes=routes or selection.CASCADE_ROUTES,
                target=target,
                seed=seed,
                filters=filters,
            )
        else:
            result = selection.verifybench_hard_selection(
                candidates,
                verifiers=[config.name for config in verifiers],
                target=DEFAULT_HARD_TARGET if target is None else target,
                min_minority=min_minority,
                seed=seed,
                strata=strata or selection.STRATUM_FIELDS,
                filters=filters,
            )
    except selection.SelectionError as exc:
        raise SelectionRequestError(str(exc)) from None
    if not result.picks:
        raise SelectionRequestError(
            f"the {strategy} recipe picked no completion of {dataset.name}; report: "
            f"{ {key: value for key, value in result.report.items() if not isinstance(value, (list, dict))} }"
        )
    report = result.as_dict()
    with transaction.atomic():
        make_project = (
            annotation_services.create_project if len(result.completion_ids) <= INLINE_ITEMS else _start_project
        )
        project = make_project(
            dataset=dataset,
            kind="correctness",
            name=name or f"{dataset.name} {strategy} selection",
            created_by=created_by,
            subject_ids=result.completion_ids,
            seed=seed,
            **(project_settings or {}),
        )
        record = SelectionRecord.objects.create(
            project=project,
            dataset=dataset,
            strategy=strategy,
            seed=seed,
            parameters=report["parameters"],
            report=report,
            picked=len(result.picks),
            created_by=created_by,
        )
        record.verifiers.set(verifiers)
    return project, record


def _start_project(**arguments):
    project, _job = project_setup.start_project(**arguments)
    return project
