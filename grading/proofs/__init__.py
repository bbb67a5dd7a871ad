"""Proof grading in the MathArena style: competitions, problems and versioned rubrics (models), the score arithmetic
(`scoring`, pure), importing MathArena files (`importing`), grading projects and grades (`services`), what graders
and reviewers see (`subject`, the `proof_grade` subject kind), queries and leaderboards (`selectors`, `leaderboard`,
pure)."""
