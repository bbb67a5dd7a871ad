"""The registry of export formats and the validation of their options. Pure module, no Django imports.

A format names its columns, the options it accepts and a `plan` function that reads the database and returns an
ExportPlan: how many rows will be written, the parameters it resolved, any shortfall, and the rows in chunks. Its
`preview` function counts those rows with aggregate queries only (no row is read into Python), and says why there
are none when there are none, so a request that would give an empty file is refused before a job is made.
The built-in formats live in `reports.exports.builders`; other apps register theirs from AppConfig.ready():

    from reports.exports import ExportFormat, register_export_format
    register_export_format(ExportFormat(name="matharena-proofs", columns=..., plan=..., ...))
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .columns import Column


class InvalidExportOptions(ValueError):
    """The options of an export request cannot be used; the message says which and why."""


@dataclass(frozen=True)
class Option:
    name: str
    kind: type  # int, float or list (of strings)
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    help: str = ""

    def clean(self, value: Any) -> Any:
        if value is None:
            return self.default
        if self.kind is list:
            if not isinstance(value, list) or not all(
                isinstance(v, (str, int)) and not isinstance(v, bool) for v in value
            ):
                raise InvalidExportOptions(f"{self.name}: must be a list of strings")
            return [str(v) for v in value]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InvalidExportOptions(f"{self.name}: must be a number, got {type(value).__name__}")
        if self.kind is int and (isinstance(value, float) and not value.is_integer()):
            raise InvalidExportOptions(f"{self.name}: must be a whole number")
        value = self.kind(value)
        if self.minimum is not None and value < self.minimum:
            raise InvalidExportOptions(f"{self.name}: must be at least {self.minimum:g}")
        if self.maximum is not None and value > self.maximum:
            raise InvalidExportOptions(f"{self.name}: must be at most {self.maximum:g}")
        return value


COMMON_OPTIONS: tuple[Option, ...] = (
    Option("seed", int, 0, help="Seed of every random choice the builder makes."),
    Option("question_ids", list, None, help="Restrict the export to these question ids (external ids)."),
    Option("chunk_size", int, 2000, 1, 50_000, help="Rows read, written and counted per chunk."),
    Option(
        "chunk_delay",
        float,
        0.0,
        0.0,
        10.0,
        help="Seconds to pause after each chunk; for tests of cancellation and crash recovery only.",
    ),
)


@dataclass(frozen=True)
class RowFacts:
    """What the manifest counts about one exported row."""

    answer_type: str = ""
    answer_subtype: str = ""
    domain: str = ""
    source: str = ""
    label: bool | None = None
    model: str = ""
    resolution: str = ""
    score: float | None = None  # a graded proof's final score, out of `max_points`
    max_points: float | None = None


@dataclass
class ExportRow:
    data: dict[str, Any]
    facts: RowFacts


@dataclass
class ExportPlan:
    total: int
    chunks: Iterator[list[ExportRow]]
    parameters: dict[str, Any] = field(default_factory=dict)
    # {group: {"requested": n, "available": m, "selected": k}} for every group that got fewer rows than asked for
    shortfalls: dict[str, dict[str, int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ExportPreview:
    """How many rows an export would write now, and why none when it would write none."""

    rows: int
    reason: str = ""
    # False when `rows` is an upper bound (a seeded sample decides the exact number while the export runs)
    exact: bool = True


def nothing_to_export(reason: str) -> str:
    """The sentence an empty export is refused with."""
    return f"Nothing to export: {reason}"


@dataclass(frozen=True)
class ExportFormat:
    name: str
    title: str
    columns: tuple[Column, ...]
    # plan(project, options) -> ExportPlan; options are already cleaned
    plan: Callable[[Any, dict[str, Any]], ExportPlan]
    options: tuple[Option, ...] = ()
    file_stem: str = ""
    # A paragraph for the dataset card: how the builder chose the rows, given the cleaned options.
    describe: Callable[[dict[str, Any]], str] = lambda options: ""
    # The kind of annotation project whose final labels the format reads.
    project_kind: str = "correctness"
    # The columns for one project, when they depend on it (id columns typed as the imported files typed them).
    columns_for: Callable[[Any], tuple[Column, ...]] | None = None
    # preview(project, options) -> ExportPreview; options are already cleaned. None: the count is not known beforehand.
    preview: Callable[[Any, dict[str, Any]], ExportPreview] | None = None

    def preview_of(self, project, options: dict[str, Any]) -> ExportPreview | None:
        return self.preview(project, options) if self.preview is not None else None

    def columns_of(self, project) -> tuple[Column, ...]:
        return self.columns_for(project) if self.columns_for is not None else self.columns

    @property
    def stem(self) -> str:
        return self.file_stem or self.name

    def all_options(self) -> tuple[Option, ...]:
        return COMMON_OPTIONS + self.options

    def clean_options(self, raw: Mapping[str, Any] | None) -> dict[str, Any]:
        raw = dict(raw or {})
        known = {option.name: option for option in self.all_options()}
        unknown = sorted(set(raw) - set(known))
        if unknown:
            raise InvalidExportOptions(
                f"unknown option(s) for {self.name}: {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        return {name: option.clean(raw.get(name)) for name, option in known.items()}


class UnknownExportFormat(KeyError):
    pass


_REGISTRY: dict[str, ExportFormat] = {}
_BUILTINS = ("reports.exports.builders", "reports.exports.matharena_proofs", "reports.exports.all_labels")


def register_export_format(export_format: ExportFormat, *, replace: bool = False) -> ExportFormat:
    existing = _REGISTRY.get(export_format.name)
    if existing is not None and existing is not export_format and not replace:
        raise ValueError(f"an export format named {export_format.name!r} is already registered")
    _REGISTRY[export_format.name] = export_format
    return export_format


def unregister_export_format(name: str) -> None:
    _REGISTRY.pop(name, None)


def _load_builtins() -> None:
    for module in _BUILTINS:
        importlib.import_module(module)


def get_export_format(name: str) -> ExportFormat:
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownExportFormat(
            f"unknown export format {name!r}; known formats: {', '.join(export_format_names())}"
        ) from None


def export_format_names() -> list[str]:
    _load_builtins()
    return list(_REGISTRY)


def clean_file_types(file_types: Sequence[str] | None) -> list[str]:
    from .writers import FILE_TYPES

    if not file_types:
        return ["jsonl"]
    if isinstance(file_types, str) or not all(isinstance(t, str) for t in file_types):
        raise InvalidExportOptions("file_types: must be a list of file types")
    unknown = [t for t in file_types if t not in FILE_TYPES]
    if unknown:
        raise InvalidExportOptions(f"file_types: unknown {', '.join(unknown)}; expected any of {', '.join(FILE_TYPES)}")
    return [t for t in FILE_TYPES if t in set(file_types)]
