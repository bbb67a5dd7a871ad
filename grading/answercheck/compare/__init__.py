"""Type-aware comparison of an extracted answer with a reference answer.

Every function returns a Comparison(status, explanation). When a comparison cannot decide it says
inconclusive rather than guessing "correct": for training rewards a false "correct" costs more
than a missed one.

One module per family of answer types; `dispatch._compare_by_type` picks the function for an answer type code:

- `numeric`: numbers, rounded or exact, percents (`compare_numbers`);
- `expressions`: algebraic expressions (`compare_expressions`);
- `equations`: equations and systems (`compare_equations`);
- `intervals`: intervals, unions and inequalities (`compare_intervals`);
- `sets`: sets, tuples and several values (`compare_collections`, `compare_multiple_values`, `compare_elements`);
- `matrices`: matrices and vectors (`compare_matrices`);
- `bases`: numerals in another base (`compare_bases`);
- `angles`: degrees and radians (`compare_angles`);
- `splitting` and `outcomes`: what the families share.

Option letters, finite states and free text are compared in the sibling modules `choices` and `strings`.
"""

from grading.answercheck.compare.angles import compare_angles
from grading.answercheck.compare.bases import compare_bases
from grading.answercheck.compare.equations import compare_equations
from grading.answercheck.compare.expressions import compare_expressions, expressions_agree, factored_less_than
from grading.answercheck.compare.intervals import compare_intervals
from grading.answercheck.compare.matrices import compare_matrices
from grading.answercheck.compare.numeric import EXACT_RELATIVE_TOLERANCE, compare_numbers, strip_trailing_remark
from grading.answercheck.compare.sets import compare_collections, compare_elements, compare_multiple_values
from grading.answercheck.compare.splitting import split_top_level, split_values

__all__ = [
    "EXACT_RELATIVE_TOLERANCE",
    "compare_angles",
    "compare_bases",
    "compare_collections",
    "compare_elements",
    "compare_equations",
    "compare_expressions",
    "compare_intervals",
    "compare_matrices",
    "compare_multiple_values",
    "compare_numbers",
    "expressions_agree",
    "factored_less_than",
    "split_top_level",
    "split_values",
    "strip_trailing_remark",
]
