"""Run Math-Verify's own test suite through grading.answercheck.

    python bench/mathverify_suite.py [--show disagree|inconclusive|all] [--timeout 5] [--sdist PATH] [--smoke]

Downloads the math-verify 0.9.0 source distribution with pip into a temporary directory (nothing of
it is kept or committed), reads the gold / prediction / expected triples of its tests with `ast`
(pytest parametrize tables, literal `compare_strings(...) == N` assertions in test bodies, and the
string-extraction table, whose expected parse gives the gold), and runs every usable case three ways:

- end to end: `verify(prediction, gold)`, the prediction as the completion and the gold as the
  reference, answer type detected;
- comparison only: the whole prediction and the whole gold handed straight to the comparison
  (`decide`), answer type detected from the gold, no extraction;
- math-verify's default configuration: `verify(parse(gold), parse(prediction))`.

For each it prints agree / disagree / inconclusive per test file and the number of false "correct"
verdicts (said "correct" where the suite expects 0). math-verify has no "inconclusive": its False
counts as a disagreement where the suite expects 1.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import math
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grading.answercheck import verify  # noqa: E402
from grading.answercheck.core import decide, reference_final_answer, resolve_answer_type  # noqa: E402

PACKAGE = "math-verify==0.9.0"
# --smoke reads this instead of the downloaded suite: each shape the reader knows (a parametrize table of gold,
# prediction and expected; the string-extraction table; a literal compare_strings assertion) and one it skips.
SMOKE_SOURCES = {
    "test_smoke.py": """
import pytest


@pytest.mark.parametrize("gold,pred,expected", [("$1/2$", "The answer is $\\\\frac{1}{2}$", 1), ("$3$", "$4$", 0)])
def test_numbers(gold, pred, expected):
    assert compare_strings(gold, pred) == expected


@pytest.mark.parametrize("pred,expected", [("\\\\boxed{7}", ["7", "7"]), ("no answer", [])])
def test_extraction(pred, expected):
    assert parse(pred) == expected


def test_literal_call():
    assert compare_strings("$x^2$", "$x \\\\cdot x$") == 1


def test_internals():
    assert parse_config() is not None
"""
}


@dataclass
class Case:
    file: str
    test: str
    gold: str
    pred: str
    expected: int
    options: dict = field(default_factory=dict)


@dataclass
class Unused:
    file: str
    test: str
    why: str


# ------------------------------------------------------------------ obtaining and reading the suite


def download_sdist(directory: Path) -> Path:
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--no-binary",
        ":all:",
        PACKAGE,
        "-d",
        str(directory),
        "-q",
    ]
    subprocess.run(command, check=True)
    archives = sorted(directory.glob("math_verify-*.tar.gz"))
    if not archives:
        sys.exit(f"pip did not leave a source archive of {PACKAGE} in {directory}")
    return archives[0]


def test_sources(archive: Path) -> dict[str, str]:
    """{file name: source} of every tests/*.py member, read straight from the archive."""
    sources = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if member.isfile() and len(parts) == 3 and parts[1] == "tests" and parts[2].endswith(".py"):
                sources[parts[2]] = tar.extractfile(member).read().decode("utf-8")
    return sources


class Opaque(str):
    """A value the reader does not evaluate (a config object built by a call); keeps its source text."""


def _literal(node: ast.AST):
    """ast.literal_eval, plus f-strings whose pieces are literals or math.<function>(literals);
    other calls (config objects) come back as Opaque source text."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        pass
    if isinstance(node, (ast.Tuple, ast.List)):
        values = [_literal(element) for element in node.elts]
        return tuple(values) if isinstance(node, ast.Tuple) else values
    if isinstance(node, ast.JoinedStr):
        pieces = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                pieces.append(str(value.value))
            elif isinstance(value, ast.FormattedValue):
                spec = "".join(str(_literal(part)) for part in value.format_spec.values) if value.format_spec else ""
                pieces.append(format(_literal(value.value), spec))
            else:
                raise ValueError("unsupported f-string piece")
        return "".join(pieces)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "math"
        and not node.keywords
    ):
        function = getattr(math, node.func.attr, None)
        if callable(function):
            return function(*(_literal(argument) for argument in node.args))
    if isinstance(node, ast.Call):
        return Opaque(ast.unparse(node))
    raise ValueError(f"not a literal: {ast.dump(node)[:80]}")


def _argument_names(node: ast.AST) -> list[str]:
    names = _literal(node)
    if isinstance(names, str):
        return [name.strip() for name in names.split(",")]
    return [str(name).strip() for name in names]


def read_cases(file: str, source: str) -> tuple[list[Case], list[Unused]]:
    cases: list[Case] = []
    unused: list[Unused] = []
    tree = ast.parse(source)
    for function in [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]:
        parametrized = False
        for decorator in function.decorator_list:
            if not (isinstance(decorator, ast.Call) and getattr(decorator.func, "attr", "") == "parametrize"):
                continue
            parametrized = True
            names = _argument_names(decorator.args[0])
            rows = decorator.args[1]
            for row in getattr(rows, "elts", []):
                try:
                    values = _literal(row)
                except ValueError as error:
                    unused.append(Unused(file, function.name, f"row is not a literal ({error})"))
                    continue
                values = dict(zip(names, values if isinstance(values, tuple) else (values,)))
                if {"gold", "pred"} <= set(values) and ({"expected"} & set(values) or {"result"} & set(values)):
                    expected = values.get("expected", values.get("result"))
                    options = {
                        key: value for key, value in values.items() if key not in ("gold", "pred", "expected", "result")
                    }
                    cases.append(Case(file, function.name, values["gold"], values["pred"], int(expected), options))
                elif {"pred", "expected"} <= set(values) and isinstance(values["expected"], list):
                    # String extraction: parse(pred) is expected to give [normalized, original].
                    if values["expected"]:
                        cases.append(Case(file, function.name, str(values["expected"][-1]), values["pred"], 1))
                    else:
                        unused.append(
                            Unused(file, function.name, "expects no extraction at all, so there is no gold answer")
                        )
                else:
                    unused.append(
                        Unused(file, function.name, f"parameters {sorted(values)} carry no gold/prediction pair")
                    )
        if parametrized:
            continue
        # Literal helper calls in a test body: assert compare_strings("gold", "pred", ...) == 1
        found = False
        for node in ast.walk(function):
            if (
                isinstance(node, ast.Compare)
                and isinstance(node.left, ast.Call)
                and getattr(node.left.func, "id", "") == "compare_strings"
                and len(node.ops) == 1
                and isinstance(node.ops[0], ast.Eq)
            ):
                try:
                    gold, pred = (_literal(argument) for argument in node.left.args[:2])
                    expected = _literal(node.comparators[0])
                    options = {keyword.arg: _literal(keyword.value) for keyword in node.left.keywords}
                except ValueError as error:
                    unused.append(Unused(file, function.name, f"call arguments are not literals ({error})"))
                    continue
                cases.append(Case(file, function.name, gold, pred, int(expected), options))
                found = True
        if not found and function.name.startswith("test_"):
            unused.append(
                Unused(
                    file,
                    function.name,
                    "tests parser or grader internals (mocks, sympy objects, configs), no gold/prediction strings",
                )
            )
    return cases, unused


# ------------------------------------------------------------------ running


def ours_end_to_end(case: Case, timeout: float) -> str:
    return verify(case.pred, case.gold, timeout=timeout).status


def ours_comparison_only(case: Case, timeout: float) -> str:
    reference = reference_final_answer(case.gold, reference_is_solution=False) or case.gold
    code, _ = resolve_answer_type(None, reference, None)
    return decide(case.pred, reference, code, None, timeout).status


def math_verify_default(case: Case, timeout: float) -> str:
    from math_verify import parse
    from math_verify import verify as mv_verify

    try:
        return "correct" if mv_verify(parse(case.gold), parse(case.pred)) else "incorrect"
    except Exception:
        return "incorrect"


def outcome(case: Case, status: str) -> str:
    if status == "inconclusive":
        return "inconclusive"
    return "agree" if (status == "correct") == bool(case.expected) else "disagree"


def report(title: str, cases: list[Case], statuses: list[str], seconds: float) -> dict:
    per_file: dict[str, Counter] = defaultdict(Counter)
    for case, status in zip(cases, statuses):
        per_file[case.file][outcome(case, status)] += 1
        if status == "correct" and not case.expected:
            per_file[case.file]["false correct"] += 1
    total = Counter()
    print(f"\n== {title}  ({len(cases)} cases, {seconds:.1f} s)")
    print(f"{'file':<28}{'n':>5}{'agree':>7}{'disagree':>10}{'inconcl.':>10}{'false correct':>15}")
    for file in sorted(per_file):
        counts = per_file[file]
        total.update(counts)
        n = counts["agree"] + counts["disagree"] + counts["inconclusive"]
        print(
            f"{file:<28}{n:>5}{counts['agree']:>7}{counts['disagree']:>10}{counts['inconclusive']:>10}{counts['false correct']:>15}"
        )
    print(
        f"{'total':<28}{len(cases):>5}{total['agree']:>7}{total['disagree']:>10}{total['inconclusive']:>10}{total['false correct']:>15}"
    )
    return total


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--sdist", help="use this already downloaded math_verify-0.9.0.tar.gz instead of calling pip")
    parser.add_argument(
        "--show",
        choices=("disagree", "inconclusive", "all", "none"),
        default="disagree",
        help="list the end-to-end cases that are not agreements (default: disagreements)",
    )
    parser.add_argument("--skip-math-verify", action="store_true")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="a built-in file of five cases in the suite's shapes instead of the download, math-verify left out when "
        "it is not installed: checks that the benchmark runs",
    )
    arguments = parser.parse_args(argv)

    if arguments.smoke:
        suite_name, sources = "built-in smoke suite", SMOKE_SOURCES
        arguments.skip_math_verify |= importlib.util.find_spec("math_verify") is None
    else:
        with tempfile.TemporaryDirectory(prefix="mathverify-suite-") as directory:
            archive = Path(arguments.sdist) if arguments.sdist else download_sdist(Path(directory))
            suite_name, sources = archive.name, test_sources(archive)
    cases: list[Case] = []
    unused: list[Unused] = []
    for file in sorted(sources):
        found, skipped = read_cases(file, sources[file])
        cases += found
        unused += skipped
    print(
        f"{suite_name}: {len(sources)} test files; {len(cases)} usable gold/prediction/expected cases, {len(unused)} not usable"
    )
    for why, count in Counter(f"{item.file}::{item.test}: {item.why}" for item in unused).most_common():
        print(f"  not usable: {why}" + (f" (x{count})" if count > 1 else ""))
    with_options = [case for case in cases if case.options]
    if with_options:
        print(
            f"  {len(with_options)} of the usable cases set a comparison option in the suite "
            f"({', '.join(sorted({f'{k}={v}' for case in with_options for k, v in case.options.items()}))}); "
            "they are run like the others"
        )

    results = {}
    for title, runner in (
        ("grading.answercheck end to end (prediction as completion, gold as reference)", ours_end_to_end),
        ("grading.answercheck comparison only (whole prediction and gold, no extraction)", ours_comparison_only),
        ("math-verify 0.9.0 default configuration: verify(parse(gold), parse(pred))", math_verify_default),
    ):
        if runner is math_verify_default and arguments.skip_math_verify:
            continue
        started = time.perf_counter()
        statuses = [runner(case, arguments.timeout) for case in cases]
        results[runner.__name__] = statuses
        report(title, cases, statuses, time.perf_counter() - started)

    if arguments.show != "none":
        wanted = {"disagree": {"disagree"}, "inconclusive": {"inconclusive"}, "all": {"disagree", "inconclusive"}}[
            arguments.show
        ]
        print(f"\nend-to-end cases that are {' or '.join(sorted(wanted))}:")
        for index, (case, status) in enumerate(zip(cases, results["ours_end_to_end"])):
            if outcome(case, status) in wanted:
                mv = results.get("math_verify_default", [None] * len(cases))[index]
                verdict = verify(case.pred, case.gold, timeout=arguments.timeout)
                print(
                    f"- {case.file}::{case.test} expected={case.expected} ours={status} math-verify={mv}"
                    f"{' options=' + str(case.options) if case.options else ''}"
                )
                print(f"    gold: {case.gold[:160]!r}")
                print(f"    pred: {case.pred[-160:]!r}")
                print(f"    why:  {verdict.explanation[:300]}")


if __name__ == "__main__":
    main()
