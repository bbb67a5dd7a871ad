"""The shapes the API answers, as TypedDicts: what the client returns is the API's JSON, typed for editors and
type checkers. Fields the server adds later simply appear in the dicts."""

from __future__ import annotations

from typing import Any, TypedDict


class Progress(TypedDict):
    done: int
    total: int
    fraction: float


class Job(TypedDict, total=False):
    """The common payload of every background job (`/api/jobs/`), also found under "job" in each kind's own."""

    kind: str
    id: int
    title: str
    status: str  # queued, running, succeeded, failed, cancelled
    attempt: int
    progress: Progress
    cancel_requested: bool
    error: str
    created_by: str | None
    created_at: str | None
    started_at: str | None
    heartbeat_at: str | None
    finished_at: str | None
    actions: dict[str, bool]


class Dataset(TypedDict, total=False):
    id: int
    name: str
    description: str
    created_by: str | None
    created_at: str
    question_count: int
    completion_count: int
    model_count: int


class ImportJob(TypedDict, total=False):
    id: int
    url: str
    source_name: str
    size: int
    dataset_name: str
    dataset: str | None
    format: str
    file_type: str
    skip_invalid: bool
    status: str
    created_by: str | None
    created_at: str
    finished_at: str | None
    report: dict[str, Any] | None  # line by line: counts, errors, conflicts
    rejects_url: str | None
    job: Job


class VerifierConfig(TypedDict, total=False):
    id: int
    name: str
    kind: str  # rule, judge, cascade
    base_url: str
    model: str
    api_key_env: str
    template: int | None
    temperature: float
    max_tokens: int | None
    timeout_seconds: float
    max_retries: int
    backoff_base_seconds: float
    concurrency_limit: int
    price_input_per_million: str
    price_output_per_million: str
    use_reference: bool
    cascade_judge: int | None
    cascade_sample_rate: float
    created_at: str
    updated_at: str


class Run(TypedDict, total=False):
    id: int
    verifier: dict[str, Any]  # id, name, kind
    scope: dict[str, Any]  # dataset, project, answer_types, domains, models
    status: str
    total: int
    done: int
    progress: float
    counts: dict[str, int]  # correct, incorrect, inconclusive, failed
    chunk_size: int
    options: dict[str, Any]
    cancel_requested: bool
    error: str
    attempt: int
    created_by: str | None
    created_at: str | None
    started_at: str | None
    finished_at: str | None
    job: Job
    cascade: dict[str, Any]  # a cascade's per-stage figures (one run only)


class Project(TypedDict, total=False):
    id: int
    name: str
    description: str
    guidelines: str
    guidelines_version: int
    dataset: str
    kind: str
    labels_per_item: int
    tiebreak_annotators: int
    agreement_threshold: float
    show_model_names: bool
    verdict_visibility: str
    lease_minutes: int
    gold_rate: float
    is_active: bool
    aggregation: str
    adaptive_redundancy: bool
    confidence_target: float
    max_labels: int
    refit_every: int
    preparing: bool
    created_at: str


class Member(TypedDict, total=False):
    id: int
    username: str
    role: str
    added_at: str
    is_active: bool
    removed_at: str | None
    labels: int


class Invitation(TypedDict, total=False):
    id: int
    role: str
    status: str  # open, used, expired, revoked
    account: str | None
    created_by: str | None
    created_at: str
    expires_at: str
    used_by: str | None
    used_at: str | None
    revoked_at: str | None
    token: str  # only in the answer that created it
    url: str  # only in the answer that created it


class ItemRow(TypedDict, total=False):
    """One row of the item browser."""

    id: int
    subject_id: int
    summary: dict[str, Any]
    state: str
    resolution: str
    label_count: int
    required_labels: int
    final_value: Any
    final_display: str | None
    excluded: bool
    is_gold: bool
    gold_value: Any
    priority: int
    answer_type: str


class BulkResult(TypedDict):
    action: str
    applied: int
    skipped: dict[str, int]


class Export(TypedDict, total=False):
    id: int
    project: int
    format: str
    file_types: list[str]
    options: dict[str, Any]
    status: str
    progress: dict[str, int]
    error: str
    attempt: int
    created_by: str | None
    created_at: str
    finished_at: str | None
    bundle_sha256: str
    bundle_size: int | None
    shortfalls: dict[str, Any]
    manifest: dict[str, Any] | None
    download_url: str | None
    job: Job


class Webhook(TypedDict, total=False):
    id: int
    project: int
    url: str
    events: list[str]
    description: str
    is_active: bool
    created_by: str | None
    created_at: str
    updated_at: str
    deliveries_url: str
    secret: str  # only when created or when the secret was replaced


class Delivery(TypedDict, total=False):
    id: int
    url: str
    webhook: int
    project: int | None
    event: str
    event_id: str
    status: str  # pending, sending, succeeded, failed
    attempts: int
    last_status_code: int | None
    last_error: str
    created_at: str
    next_attempt_at: str | None
    delivered_at: str | None
    body: dict[str, Any]  # one delivery only
    attempt_log: list[dict[str, Any]]  # one delivery only
