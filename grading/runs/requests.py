"""Run requests: create a run, cancel, resume and restart it, with their checks."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from core import taxonomy
from core.jobs import runner
from verifybench.models import Domain

from ..models import VerificationRun, VerifierConfig

MAX_CHUNK_SIZE = 10_000
MAX_CHUNK_DELAY = 60.0
# Completions per chunk when the request names no size: the rules verify thousands a second, and a chunk is the unit
# of a commit; a judge's calls stream across chunks whatever their size, so its chunks only set how often it commits.
DEFAULT_CHUNK_SIZES = {VerifierConfig.Kind.RULE: 2000, VerifierConfig.Kind.JUDGE: 200, VerifierConfig.Kind.CASCADE: 500}


class RunRequestError(runner.JobRequestError):
    """A run request that cannot be carried out; the message says why."""


def clean_options(options) -> dict:
    options = dict(options or {})
    unknown = sorted(set(options) - {"chunk_delay"})
    if unknown:
        raise RunRequestError(f"unknown option(s) {', '.join(unknown)}; the only option is chunk_delay")
    delay = options.get("chunk_delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not 0 <= delay <= MAX_CHUNK_DELAY:
        raise RunRequestError(f"chunk_delay must be a number of seconds between 0 and {MAX_CHUNK_DELAY:g}")
    return {"chunk_delay": float(delay)} if delay else {}


def clean_scope_filters(answer_types=None, domains=None, models=None) -> dict[str, list[str]]:
    """Checked filter lists: answer types are fine codes (A1) or coarse classes (A), domains known ones."""
    cleaned = {}
    for name, values in (("answer_types", answer_types), ("domains", domains), ("models", models)):
        values = [] if values is None else values
        if isinstance(values, str) or not all(isinstance(value, str) and value.strip() for value in values):
            raise RunRequestError(f"{name} must be a list of non-empty strings")
        cleaned[name] = sorted({value.strip() for value in values})
    known_types = {answer_type.code for answer_type in taxonomy.ANSWER_TYPES} | set(taxonomy.COARSE_CLASSES)
    unknown = [code for code in cleaned["answer_types"] if code not in known_types]
    if unknown:
        raise RunRequestError(f"unknown answer type(s) {', '.join(unknown)}; use codes like A1 or classes like A")
    unknown = [domain for domain in cleaned["domains"] if domain not in Domain.values]
    if unknown:
        raise RunRequestError(f"unknown domain(s) {', '.join(unknown)}; choose from {', '.join(Domain.values)}")
    return cleaned


def _usable(config: VerifierConfig) -> None:
    try:
        config.full_clean(validate_unique=False)
    except ValidationError as error:
        problems = [
            f"{field}: {' '.join(messages)}" if field != "__all__" else " ".join(messages)
            for field, messages in error.message_dict.items()
        ]
        raise RunRequestError(f"the verifier {config.name!r} cannot run: {'; '.join(problems)}") from None


def create_run(
    *,
    verifier: VerifierConfig,
    dataset=None,
    project=None,
    answer_types=None,
    domains=None,
    models=None,
    chunk_size: int | None = None,
    options=None,
    created_by=None,
    enqueue: bool = True,
) -> VerificationRun:
    """Validate a run request, create the run and queue it once the transaction commits."""
    if (dataset is None) == (project is None):
        raise RunRequestError("give exactly one scope: a dataset or an annotation project")
    if project is not None and project.kind != "correctness":
        raise RunRequestError(f"project {project.pk} is a {project.kind} project; verifiers judge correctness")
    if verifier.kind == VerifierConfig.Kind.EXTERNAL:
        raise RunRequestError(
            f"{verifier.name!r} holds verdicts imported from elsewhere; it cannot run (import its verdicts again)"
        )
    if chunk_size is None:
        chunk_size = DEFAULT_CHUNK_SIZES[VerifierConfig.Kind(verifier.kind)]
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or not 1 <= chunk_size <= MAX_CHUNK_SIZE:
        raise RunRequestError(f"chunk_size must be an integer between 1 and {MAX_CHUNK_SIZE}")
    workspace_id = dataset.workspace_id if dataset is not None else project.dataset.workspace_id
    for config in (verifier, verifier.cascade_judge if verifier.kind == VerifierConfig.Kind.CASCADE else None):
        if config is not None:
            _usable(config)
            if config.workspace_id not in (None, workspace_id):
                raise RunRequestError(f"the verifier {config.name!r} belongs to another workspace than the data")
    filters = clean_scope_filters(answer_types, domains, models)
    run = VerificationRun.objects.create(
        verifier=verifier,
        dataset=dataset,
        project=project,
        answer_types=filters["answer_types"],
        domains=filters["domains"],
        model_names=filters["models"],
        chunk_size=chunk_size,
        options=clean_options(options),
        created_by=created_by,
    )
    if enqueue:
        runner.enqueue(run)
    return run


def cancel_run(run: VerificationRun) -> VerificationRun:
    """Ask a run to stop. A queued run is cancelled at once; a running one stops once the chunks its workers hold
    are committed (a judge's calls already on the wire are kept in the cache)."""
    try:
        return runner.cancel(run)
    except runner.JobRequestError as exc:
        raise RunRequestError(str(exc)) from None


def resume_run(run: VerificationRun, *, force: bool = False, enqueue: bool = True) -> VerificationRun:
    """Queue a run again as a new attempt; it goes on from the completions still without a usable verdict.

    A running run counts as dead once its heartbeat is older than VERIFICATION_STALE_SECONDS; `force` takes it over
    anyway (for a caller who knows its worker is gone). Resuming a finished run picks up completions added to the
    scope since, and retries failed judge calls.
    """
    try:
        return runner.resume(run, force=force, enqueue_it=enqueue)
    except runner.JobRequestError as exc:
        raise RunRequestError(str(exc)) from None


def restart_run(run: VerificationRun, *, force: bool = False, enqueue: bool = True) -> VerificationRun:
    """Queue a run again as a new attempt that verifies its whole scope again (e.g. after the verifier changed)."""
    try:
        return runner.restart(run, force=force, enqueue_it=enqueue)
    except runner.JobRequestError as exc:
        raise RunRequestError(str(exc)) from None
