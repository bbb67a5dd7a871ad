"""Real chromium: three graders grade one proof on the grading page (steppers, keyboard, chain tabs); the first
two are 3 points apart, the third settles it and the final score is the median."""

from __future__ import annotations

import pytest

from annotation import workflow
from annotation.models import Item, Label
from core import roles
from grading.proofs import services as proof_services

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RUBRIC = {
    "max_points": 7,
    "chains": [
        {
            "key": "amgm",
            "title": "AM-GM on the ratios",
            "checkpoints": [
                {
                    "key": "a1",
                    "title": "Product of the ratios is 1",
                    "points": 2,
                    "description": "Observes $\\frac ab \\cdot \\frac bc \\cdot \\frac ca = 1$.",
                },
                {"key": "a2", "title": "Applies AM-GM", "points": 3, "allow_partial": True},
                {"key": "a3", "title": "Equality case", "points": 2, "allow_partial": True},
            ],
        },
        {
            "key": "clear",
            "title": "Clear denominators",
            "checkpoints": [
                {"key": "b1", "title": "Polynomial form", "points": 3},
                {"key": "b2", "title": "Proves it", "points": 4, "allow_partial": True},
            ],
        },
    ],
    "deductions": [{"key": "d_sign", "title": "Sign error", "kind": "penalty", "amount": 1}],
    "zero_credit": [{"title": "Only the equality case", "description": "Checking $a=b=c$ proves nothing."}],
}
PROOF = (
    "By AM-GM, $\\frac ab + \\frac bc + \\frac ca \\ge 3\\sqrt[3]{1} = 3$. "
    "<script>window.__pwned = 1</script> Equality when $a = b = c$."
)


@pytest.fixture
def proof_project(make_user):
    competition = proof_services.get_or_create_competition("Browser Olympiad")
    problem = proof_services.add_problem(
        competition,
        problem_idx=2,
        statement="Prove $\\frac ab+\\frac bc+\\frac ca\\ge 3$.",
        solutions=["AM-GM."],
        rubric=RUBRIC,
    )
    proof_services.add_submission(problem, model_name="secret-model-name", text=PROOF)
    graders = [make_user(roles.ANNOTATOR, username=f"grader{n}") for n in (1, 2, 3)]
    project = proof_services.create_proof_project(name="Browser proofs", competition=competition, graders=graders)
    return project, graders


def open_next_task(page, app_url, project):
    page.goto(app_url("proof-home"))
    page.get_by_role("button", name="Grade next proof").click()
    page.wait_for_selector("#proof-grading[data-ready='1']")
    page.wait_for_selector("html[data-math-ready='1']")


def total(page) -> str:
    return page.get_by_test_id("running-total").inner_text()


def test_three_graders_on_the_grading_page_and_the_median_is_final(
    browser, live_server, login, app_url, screenshot, proof_project
):
    project, graders = proof_project

    # Grader 1: full marks on the AM-GM chain with the keyboard (j to move, a for full points, + to add).
    page = browser.new_page()
    login(page, graders[0])
    open_next_task(page, app_url, project)
    assert "secret-model-name" not in page.content()
    assert page.evaluate("window.__pwned") is None
    page.get_by_test_id("checkpoint-a1").focus()
    page.keyboard.press("a")
    page.keyboard.press("j")
    for _ in range(3):
        page.keyboard.press("+")
    page.keyboard.press("j")
    page.keyboard.press("+")
    page.keyboard.press("+")
    assert total(page) == "7"
    page.keyboard.press("-")
    assert total(page) == "6"
    page.keyboard.press("k")
    page.keyboard.press("k")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("+")
    assert total(page) == "7"
    page.get_by_role("button", name="Save grade").click()
    page.wait_for_url("**?graded=*")
    page.close()

    # Grader 2: the other chain with the steppers, 3 + 2 points minus a sign error = 4 (3 below grader 1).
    page = browser.new_page()
    login(page, graders[1])
    open_next_task(page, app_url, project)
    page.get_by_role("tab", name="Clear denominators").click()
    assert page.locator("#chain-clear").is_visible() and not page.locator("#chain-amgm").is_visible()
    page.get_by_role("button", name="More points for Polynomial form").click()
    page.get_by_role("button", name="More points for Proves it").click()
    page.get_by_role("button", name="More points for Proves it").click()
    assert total(page) == "5"
    page.get_by_role("checkbox", name="Sign error").check()
    assert total(page) == "4"
    page.get_by_role("button", name="Save grade").click()
    errors = page.get_by_test_id("grade-errors").inner_text()
    assert "b2" in errors and "d_sign" in errors
    assert total(page) == "4"  # the choices survive the refusal
    page.get_by_label("Justification for Proves it").fill("Only the case a >= b >= c is handled.")
    page.get_by_label("Justification for Sign error").fill("Multiplies by (a - b) without knowing its sign.")
    page.get_by_role("button", name="Save grade").click()
    page.wait_for_url("**?graded=*")
    page.close()

    item = Item.objects.get(project=project)
    assert item.state == workflow.NEEDS_TIEBREAK
    assert sorted(Label.objects.filter(item=item).values_list("value", flat=True)) == [4.0, 7.0]

    # Grader 3: AM-GM chain, 2 + 2 + 1 = 5 with steppers and keys; the screenshot shows the grading page.
    page = browser.new_page(viewport={"width": 1400, "height": 1500})
    login(page, graders[2])
    open_next_task(page, app_url, project)
    page.get_by_role("button", name="More points for Product of the ratios is 1").click()
    for _ in range(2):
        page.get_by_role("button", name="More points for Applies AM-GM").click()
    page.keyboard.press("j")
    page.keyboard.press("+")
    assert total(page) == "5"
    page.get_by_label("Justification for Applies AM-GM").fill("States AM-GM but never checks positivity.")
    page.get_by_label("Justification for Equality case").fill("Equality claimed, not shown.")
    screenshot(page, "proof-grading", full_page=False)
    page.get_by_role("button", name="Save grade").click()
    page.wait_for_url("**?graded=*")
    page.close()

    item.refresh_from_db()
    assert (item.state, item.resolution, item.final_value) == (workflow.RESOLVED, workflow.BY_MAJORITY, 5.0)
    third = Label.objects.get(item=item, annotator=graders[2])
    assert third.value == 5.0 and third.details["awarded"] == {"a1": 2, "a2": 2, "a3": 1}


def test_the_grading_page_fits_a_phone(browser, live_server, login, app_url, proof_project):
    """At 390 px the rubric's rows wrap: nothing runs past the right edge."""
    project, graders = proof_project
    page = browser.new_page(viewport={"width": 390, "height": 800})
    login(page, graders[0])
    open_next_task(page, app_url, project)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()


def test_ctrl_enter_saves_from_any_field_and_s_skips_to_the_next_proof(page, live_server, login, app_url, make_user):
    competition = proof_services.get_or_create_competition("Keyboard Olympiad")
    for index, text in ((1, "First proof."), (2, "Second proof.")):
        problem = proof_services.add_problem(
            competition, problem_idx=index, statement=f"Problem {index}.", solutions=["Any."], rubric=RUBRIC
        )
        proof_services.add_submission(problem, model_name="model", text=text)
    grader = make_user(roles.ANNOTATOR, username="keys")
    others = [make_user(roles.ANNOTATOR, username=f"other{n}") for n in (1, 2)]
    project = proof_services.create_proof_project(
        name="Keyboard proofs", competition=competition, graders=[grader, *others]
    )
    login(page, grader)
    open_next_task(page, app_url, project)
    first_url = page.url
    page.keyboard.press("s")  # skip: on to the next proof, the skipped one left for others
    page.wait_for_url(lambda url: url != first_url and "/grading/tasks/" in url)
    page.wait_for_selector("#proof-grading[data-ready='1']")
    assert "Skipped; here is the next proof." in page.locator("body").inner_text()

    page.locator("[data-checkpoint]:visible").first.focus()
    page.keyboard.press("a")
    page.locator("#grade-note").fill("saved with the keyboard")
    page.locator("#grade-note").press("Control+Enter")  # from inside a text field
    page.wait_for_url(lambda url: "graded=" in url)
    label = Label.objects.get(annotator=grader)
    assert label.note == "saved with the keyboard"
    skipped = Item.objects.filter(project=project).exclude(pk=label.item_id).get()
    assert skipped.tasks.get(annotator=grader).status == "skipped"
