"""README.md promises `make run` and `make test`; every `make <target>` it mentions must exist in the Makefile."""
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def makefile_targets() -> set[str]:
    text = (REPO_ROOT / "Makefile").read_text()
    targets = set()
    for line in text.splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+(?:\s+[A-Za-z0-9_.-]+)*)\s*:(?!=)", line)
        if match and not line.startswith((".", "\t")):
            targets.update(match.group(1).split())
    return targets


def readme_make_targets() -> set[str]:
    """Targets of `make` commands in the README's code (fenced blocks and inline code), not in its prose."""
    text = (REPO_ROOT / "README.md").read_text()
    fenced = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    code = fenced + re.findall(r"`([^`\n]+)`", prose)
    return {target for snippet in code for target in re.findall(r"(?<![\w-])make\s+([A-Za-z][\w-]*)", snippet)}


def test_readme_mentions_make_run_and_make_test():
    targets = readme_make_targets()
    assert "run" in targets
    assert "test" in targets


def test_every_make_target_in_the_readme_exists():
    missing = readme_make_targets() - makefile_targets()
    assert not missing, f"README.md mentions make targets the Makefile lacks: {sorted(missing)}"
