"""Verification and proof grading, above the workflow: the rule-based verifier (`answercheck`, pure) and LLM judges
(`judges`), verifier configurations and their verdicts, verification runs (a job kind), selections of completions
for annotation (`selection`), and MathArena-style proof grading (`proofs`: rubrics, grades, leaderboards).

May use: core, verifybench, annotation. Used by: reports, frontend.
"""
