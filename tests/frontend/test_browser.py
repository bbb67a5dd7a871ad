"""Real chromium against the live server: untrusted text stays inert, math typesets, login works, CSP is sent."""

from __future__ import annotations

import pytest

from core import roles

from .helpers import make_completion
from .test_rendering import XSS_PAYLOADS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# Fixed names keep the screenshots in docs/screenshots stable from run to run.
@pytest.fixture
def researcher(make_user):
    return make_user(roles.RESEARCHER, username="rita")


@pytest.fixture
def annotator(make_user):
    return make_user(roles.ANNOTATOR, username="alan")


# Runs before any page script (and is not subject to the page's CSP): records what the page tries to do.
WATCH_PAGE = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
});
"""

BROKEN_FORMULA = "\\frac{1}{"


def watch(page, origin: str) -> dict:
    seen = {"dialogs": [], "requests": [], "page_errors": []}

    def on_dialog(dialog):
        seen["dialogs"].append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("pageerror", lambda error: seen["page_errors"].append(str(error)))
    page.add_init_script(WATCH_PAGE)
    seen["origin"] = origin
    return seen


def wait_for_math(page) -> None:
    page.wait_for_selector("html[data-math-ready='1']")


def test_completion_stuffed_with_xss_payloads_runs_nothing_and_loads_nothing_foreign(
    page, live_server, login, researcher, app_url, screenshot
):
    completion = make_completion(
        "Attempts follow.\n\n" + "\n\n".join(XSS_PAYLOADS) + "\n\nStill, the sum is $\\boxed{1}$.",
        question_text="Compute $x$. <img src=x onerror=\"document.title='pwned'\"> " + XSS_PAYLOADS[0],
        solution='<svg onload="window.__pwned=2"></svg> The value is \\(1\\).',
    )
    seen = watch(page, live_server.url)
    login(page, researcher)
    page.goto(app_url("completion-detail", completion.pk))
    wait_for_math(page)
    page.mouse.move(400, 400)
    page.mouse.move(600, 500)
    page.wait_for_load_state("networkidle")

    title = page.title()
    assert title.startswith("Completion ") and "pwned" not in title
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("window.__cspViolations") == []
    assert seen["dialogs"] == []
    assert seen["page_errors"] == []
    foreign = [url for url in seen["requests"] if not url.startswith(live_server.url)]
    assert foreign == []
    assert (
        page.locator(
            "[data-testid=completion] script, [data-testid=completion] iframe, "
            "[data-testid=completion] svg, [data-testid=completion] img"
        ).count()
        == 0
    )
    assert page.locator("[data-testid=completion]").get_by_text("<script>window.__pwned = 1</script>").count() == 1
    assert page.locator("[data-testid=completion] .katex").count() >= 1
    screenshot(page, "completion-xss-inert")


def test_math_typesets_and_a_broken_formula_shows_its_source(page, live_server, login, researcher, app_url, screenshot):
    text = (
        "We use every delimiter: $a^2+b^2=c^2$, \\(\\sqrt{2}\\), and\n\n"
        "$$\n\\int_0^1 x^2\\,dx = \\frac{1}{3}\n$$\n\n"
        "\\[\n\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\n\\]\n\n"
        f"A formula that does not parse: ${BROKEN_FORMULA}$.\n\n"
        "```\n$not math$\n```\n\n"
        "**Final answer:** $\\boxed{\\tfrac{1}{3}}$"
    )
    completion = make_completion(text, dataset_name="VerifyBench sample")
    seen = watch(page, live_server.url)
    login(page, researcher)
    page.goto(app_url("completion-detail", completion.pk))
    wait_for_math(page)

    body = page.locator("[data-testid=completion]")
    assert body.locator(".math .katex").count() == 5
    assert body.locator(".math[data-display=block] .katex-display").count() == 2
    broken = body.locator(".math.math-error")
    assert broken.count() == 1
    assert broken.inner_text() == BROKEN_FORMULA
    assert body.locator("pre code").inner_text().strip() == "$not math$"
    final = page.locator("#final-answer")
    assert final.locator(".katex").count() == 1

    page.get_by_role("link", name="Jump to the final answer").click()
    page.wait_for_url("**#final-answer")
    assert final.is_visible()
    assert page.locator("[data-testid=question] .katex").count() == 1
    assert page.locator("[data-testid=reference-answer] .katex").count() == 1
    assert seen["page_errors"] == []
    screenshot(page, "completion-view")


def test_typeset_can_be_called_again_on_a_swapped_fragment(page, live_server, login, researcher, app_url):
    completion = make_completion("Start $x$.")
    login(page, researcher)
    page.goto(app_url("completion-detail", completion.pk))
    wait_for_math(page)
    counts = page.evaluate("""() => {
        const fragment = document.createElement('div');
        fragment.innerHTML = '<span class="math" data-display="inline">y^2</span>';
        document.querySelector('[data-testid=completion]').append(fragment);
        fragment.dispatchEvent(new CustomEvent(window.mathlabel.FRAGMENT_SWAPPED_EVENT, {bubbles: true}));
        return [fragment.querySelectorAll('.katex').length, window.mathlabel.typeset(fragment).rendered];
    }""")
    assert counts == [1, 0]


def test_login_and_logout_through_the_forms(page, live_server, login, annotator, app_url, screenshot):
    page.goto(app_url("home"))
    page.wait_for_url(f"{app_url('login')}?next=/")
    page.get_by_label("Username").fill(annotator.username)
    page.get_by_label("Password").fill("not-the-password")
    page.get_by_role("button", name="Log in").click()
    assert page.get_by_role("alert").is_visible()
    screenshot(page, "login-error")

    login(page, annotator)
    assert page.get_by_text(f"Signed in as {annotator.username}").is_visible()
    assert page.get_by_test_id("no-projects").is_visible()
    screenshot(page, "home-annotator")
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url(app_url("login"))
    page.goto(app_url("home"))
    page.wait_for_url(f"{app_url('login')}?next=/")


def test_pages_send_a_content_security_policy(page, live_server, login, researcher, app_url, screenshot):
    response = page.goto(app_url("login"))
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    make_completion("Some text.", dataset_name="VerifyBench sample")
    login(page, researcher)
    assert page.get_by_role("link", name="VerifyBench sample").is_visible()
    screenshot(page, "home-researcher")


def test_focus_ring_is_visible_on_keyboard_navigation(page, live_server, app_url, built_assets):
    page.goto(app_url("login"))
    page.keyboard.press("Tab")
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"
