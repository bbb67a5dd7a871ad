"""Export bundles (zip of data files, manifest.json and a dataset card) of final human labels.

Pure parts: `columns`, `writers`, `registry`, `selection`, `manifest`, `pseudonyms`. Database parts: `builders` (the built-in
formats) and `runner` (running one ExportJob atomically).
"""

from .columns import MUMATH_COLUMNS, VERIFYBENCH_COLUMNS, Column
from .registry import (
    COMMON_OPTIONS,
    ExportFormat,
    ExportPlan,
    ExportPreview,
    ExportRow,
    InvalidExportOptions,
    Option,
    RowFacts,
    UnknownExportFormat,
    clean_file_types,
    export_format_names,
    get_export_format,
    nothing_to_export,
    register_export_format,
    unregister_export_format,
)
from .writers import FILE_TYPES, read_rows

__all__ = [
    "COMMON_OPTIONS",
    "FILE_TYPES",
    "MUMATH_COLUMNS",
    "VERIFYBENCH_COLUMNS",
    "Column",
    "ExportFormat",
    "ExportPlan",
    "ExportPreview",
    "ExportRow",
    "InvalidExportOptions",
    "Option",
    "RowFacts",
    "UnknownExportFormat",
    "clean_file_types",
    "export_format_names",
    "get_export_format",
    "nothing_to_export",
    "read_rows",
    "register_export_format",
    "unregister_export_format",
]
