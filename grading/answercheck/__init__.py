"""Rule-based final-answer verification. Pure Python, no Django imports."""
from grading.answercheck.extract import extract_final_answer, final_answer_span

__all__ = ["extract_final_answer", "final_answer_span"]
