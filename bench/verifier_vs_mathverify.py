"""Compare grading.answercheck with math-verify on a labeled VerifyBench-shaped JSONL file.

    python bench/verifier_vs_mathverify.py [FILE] [--smoke]      (default: fixtures/verifier_eval.jsonl)

Prints, for each verifier, n / accuracy / TPR / TNR / macro-F1 per fine answer type, per coarse
class and overall, plus wall time. Inconclusive counts as predicting "incorrect". Beside them, for
each verifier, coverage per type (the share of rows it decided, correct or incorrect; math-verify
always decides) and the precision of its decided verdicts, overall and for "correct" and
"incorrect" apart.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.taxonomy import UnknownAnswerType, parse_answer_type  # noqa: E402
from grading.answercheck import verify  # noqa: E402


def load(path: Path) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                sys.exit(f"{path}, line {number}: not valid JSON ({error.msg})")
            for field in ("answer", "completion", "gold_correct"):
                if field not in row:
                    sys.exit(f"{path}, line {number}: missing field {field}")
            rows.append(row)
    return rows


def fine_code(row: dict) -> str:
    try:
        parsed = parse_answer_type(row.get("answer_type"))
    except UnknownAnswerType:
        parsed = None
    return parsed.code if parsed else "?"


def scores(pairs: list[tuple[bool, bool]]) -> dict:
    tp = sum(1 for gold, predicted in pairs if gold and predicted)
    tn = sum(1 for gold, predicted in pairs if not gold and not predicted)
    fp = sum(1 for gold, predicted in pairs if not gold and predicted)
    fn = sum(1 for gold, predicted in pairs if gold and not predicted)

    def f1(hit, false_positive, false_negative):
        denominator = 2 * hit + false_positive + false_negative
        return 2 * hit / denominator if denominator else 1.0

    return {
        "n": len(pairs),
        "accuracy": (tp + tn) / len(pairs) if pairs else 0.0,
        "tpr": tp / (tp + fn) if tp + fn else float("nan"),
        "tnr": tn / (tn + fp) if tn + fp else float("nan"),
        "macro_f1": (f1(tp, fp, fn) + f1(tn, fn, fp)) / 2,
    }


def run_answercheck(rows: list[dict], timeout: float) -> tuple[list[bool], list[str]]:
    predictions, statuses = [], []
    for row in rows:
        verdict = verify(
            row["completion"],
            row["answer"],
            answer_type=row.get("answer_type"),
            question=row.get("question"),
            timeout=timeout,
        )
        predictions.append(verdict.status == "correct")
        statuses.append(verdict.status)
    return predictions, statuses


def abstention_table(rows: list[dict], statuses: list[str], name: str = "grading.answercheck") -> None:
    """Coverage and precision of decided verdicts, per fine type, per class and overall."""
    groups: dict[str, list[tuple[bool, str]]] = defaultdict(list)
    for row, status in zip(rows, statuses):
        pair = (bool(row["gold_correct"]), status)
        code = fine_code(row)
        groups[code].append(pair)
        groups[f"[{code[0]}]"].append(pair)
        groups["overall"].append(pair)
    print(
        f"\ncoverage and precision ({name}): coverage = decided / n; precision = decided verdicts that agree with the label"
    )
    print(
        f"{'type':<8}{'n':>5}{'decided':>9}{'coverage':>10}{'precision':>11}{'correct-prec':>14}{'incorrect-prec':>16}"
    )
    order = (
        sorted(key for key in groups if not key.startswith("[") and key != "overall")
        + sorted(key for key in groups if key.startswith("["))
        + ["overall"]
    )
    for key in order:
        pairs = groups[key]
        decided = [(gold, status) for gold, status in pairs if status != "inconclusive"]
        said_correct = [gold for gold, status in decided if status == "correct"]
        said_incorrect = [gold for gold, status in decided if status == "incorrect"]
        agree = sum(1 for gold, status in decided if gold == (status == "correct"))

        def share(part, whole):
            return f"{part / whole:.3f}" if whole else "  -  "

        print(
            f"{key:<8}{len(pairs):>5}{len(decided):>9}{share(len(decided), len(pairs)):>10}{share(agree, len(decided)):>11}"
            f"{share(sum(said_correct), len(said_correct)):>14}{share(len(said_incorrect) - sum(said_incorrect), len(said_incorrect)):>16}"
        )


def run_math_verify(rows: list[dict], timeout: float) -> list[bool]:
    from math_verify import parse
    from math_verify import verify as math_verify

    predictions = []
    for row in rows:
        try:
            gold = parse(
                row["answer"] if "\\boxed" in row["answer"] else f"${row['answer']}$", parsing_timeout=int(timeout)
            )
            answer = parse(row["completion"], parsing_timeout=int(timeout))
            predictions.append(bool(math_verify(gold, answer, timeout_seconds=int(timeout))))
        except Exception:
            predictions.append(False)
    return predictions


def table(title: str, rows: list[dict], predictions: list[bool], seconds: float) -> None:
    groups: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    coarse: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    everything = []
    for row, predicted in zip(rows, predictions):
        pair = (bool(row["gold_correct"]), predicted)
        code = fine_code(row)
        groups[code].append(pair)
        coarse[code[0]].append(pair)
        everything.append(pair)
    print(f"\n== {title}  ({len(rows)} rows, {seconds:.1f} s wall)")
    print(f"{'type':<8}{'n':>5}{'acc':>8}{'TPR':>8}{'TNR':>8}{'macroF1':>9}")

    def line(name, pairs):
        s = scores(pairs)
        print(f"{name:<8}{s['n']:>5}{s['accuracy']:>8.3f}{s['tpr']:>8.3f}{s['tnr']:>8.3f}{s['macro_f1']:>9.3f}")

    for code in sorted(groups):
        line(code, groups[code])
    print("-" * 46)
    for letter in sorted(coarse):
        line(f"[{letter}]", coarse[letter])
    line("overall", everything)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", default=str(ROOT / "fixtures" / "verifier_eval.jsonl"))
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--show-errors", action="store_true", help="list the rows answercheck gets wrong")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="the first 30 rows, math-verify left out when it is not installed: checks that it runs",
    )
    arguments = parser.parse_args(argv)
    rows = load(Path(arguments.file))
    if arguments.smoke:
        rows = rows[:30]

    started = time.perf_counter()
    ours, statuses = run_answercheck(rows, arguments.timeout)
    table("grading.answercheck", rows, ours, time.perf_counter() - started)
    abstention_table(rows, statuses)

    if arguments.smoke and importlib.util.find_spec("math_verify") is None:
        print("\nmath-verify is not installed (make bench-install): its figures are left out")
        return
    started = time.perf_counter()
    theirs = run_math_verify(rows, arguments.timeout)
    table("math-verify 0.9.0 (parse + verify)", rows, theirs, time.perf_counter() - started)
    # math-verify never abstains: it decides every row, so its coverage is 1 and its precision is per verdict.
    abstention_table(rows, ["correct" if said else "incorrect" for said in theirs], "math-verify")

    if arguments.show_errors:
        print("\nanswercheck mistakes:")
        for row, predicted in zip(rows, ours):
            if predicted != bool(row["gold_correct"]):
                verdict = verify(
                    row["completion"], row["answer"], answer_type=row.get("answer_type"), question=row.get("question")
                )
                print(
                    f"  {row.get('completion_id')}: gold={row['gold_correct']} -> {verdict.status}: {verdict.explanation}"
                )


if __name__ == "__main__":
    main()
