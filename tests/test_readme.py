"""The README keeps up with the code: every `grace` subcommand is in it, every setting has
a row in the configuration table (docs/configuration.md, linked from it), it starts with
the two set-up commands, its sections come in the order a company sets GRACE up, and its
links to docs/ pages resolve."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from pydantic import AliasChoices, BaseModel

from bot.service.settings import Settings

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
CONFIGURATION = REPO / "docs" / "configuration.md"

# The README's top-level sections, in the order a company follows them: a keyword of each
# heading (case-insensitive), one per `## ` heading, none missing, none extra.
SECTION_ORDER = (
    "try it",
    "slack",
    "documents",
    "gemini",
    "production",
    "operate",
    "how it works",
    "quality",
    "development",
)


def subcommands() -> list[str]:
    """The subcommands `grace --help` lists (its `{ingest,ask,…}` line)."""
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "--help"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    match = re.search(r"\{([a-z,_-]+)\}", result.stdout)
    assert match, result.stdout
    return match.group(1).split(",")


def variables(model: type[BaseModel], prefix: str = "GRACE_") -> Iterator[str]:
    """Every setting's environment variable: `GRACE_SECTION__FIELD` for nested sections,
    the field's own name where it has one (`GOOGLE_API_KEY`)."""
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            yield from variables(kind, f"{prefix}{name.upper()}__")
        elif isinstance(field.validation_alias, AliasChoices):
            yield str(field.validation_alias.choices[0])
        else:
            yield f"{prefix}{name.upper()}"


def configuration_rows(text: str) -> dict[str, str]:
    """{variable: its row} from the table of docs/configuration.md (the page is the
    configuration section: its title, a sentence, the table)."""
    assert text.startswith("# Configuration\n")
    rows: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        first_cell = line.split("|")[1]
        for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", first_cell):
            rows[name] = line
    return rows


def test_every_subcommand_is_in_the_readme() -> None:
    text = README.read_text(encoding="utf-8")
    commands = subcommands()
    assert {"ask", "ingest", "thresholds", "dev", "serve"} <= set(commands)
    missing = [c for c in commands if not re.search(rf"`?grace {c}\b", text)]
    assert not missing, f"README does not mention: {missing}"


def test_every_setting_has_a_row_in_the_configuration_table() -> None:
    assert "(docs/configuration.md)" in README.read_text(encoding="utf-8")
    rows = configuration_rows(CONFIGURATION.read_text(encoding="utf-8"))
    names = list(variables(Settings))
    assert {"GRACE_LOG_LEVEL", "GRACE_CONFIDENCE__THRESHOLDS__SILENT", "GOOGLE_API_KEY"} <= set(
        names
    )
    missing = [name for name in names if name not in rows]
    assert not missing, f"no row in README's configuration table for: {missing}"
    for name, row in rows.items():
        default = row.split("|")[2].strip()
        assert default, f"{name}: the row gives no default"


def test_log_defaults_are_the_real_ones() -> None:
    rows = configuration_rows(CONFIGURATION.read_text(encoding="utf-8"))
    for name, field in (("GRACE_LOG_FORMAT", "log_format"), ("GRACE_LOG_LEVEL", "log_level")):
        default = Settings.model_fields[field].default
        assert rows[name].split("|")[2].strip() == f"`{default}`"


def test_it_starts_with_the_two_commands_and_says_what_they_need() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first_block
    assert first_block.group(1).splitlines() == [
        "pip install -e . && grace dev",
        "bash scripts/test.sh",
    ]
    quick_start = "\n## ".join(text.split("\n## ", 2)[:2])  # what it is, and "Try it"
    assert re.search(r"^## Try it$", quick_start, re.M)
    assert quick_start.index("python3 -m venv") < quick_start.index("```bash"), (
        "the virtualenv advice comes before the two commands"
    )
    assert "Python ≥ 3.11" in quick_start
    assert "python3 -m venv .venv && . .venv/bin/activate" in quick_start
    assert re.search(r"\*\*[\d½]+ minutes\*\*", quick_start), "how long the tests take"
    assert "already in use" in quick_start and "GRACE_DATA_DIR" in quick_start
    troubleshooting = re.split(r"\n#{2,3} ", text.split("\n### Troubleshooting\n", 1)[1])[0]
    for problem in ("Port 3000 is in use", "already in use", "Chromium not found"):
        assert problem in troubleshooting


def test_top_level_sections_come_in_the_order_a_company_follows() -> None:
    text = README.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a `## ` inside a code block is no heading
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert len(headings) == len(SECTION_ORDER), headings
    for heading, keyword in zip(headings, SECTION_ORDER, strict=True):
        assert keyword in heading.lower(), f"{heading!r} where {keyword!r} belongs"


def anchors(page: Path) -> set[str]:
    """The `#fragment`s GitHub gives a page's headings: lower case, punctuation dropped,
    spaces to hyphens, a repeated one numbered."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def relative_links(page: Path) -> Iterator[tuple[Path, str]]:
    """(target file, fragment or "") for each relative Markdown link of a page."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, fragment = target.partition("#")
        yield (page.parent / path).resolve() if path else page, fragment


def test_every_link_to_a_docs_page_resolves() -> None:
    docs_links = [
        (target, fragment)
        for target, fragment in relative_links(README)
        if target.parent == REPO / "docs" and target.suffix == ".md"
    ]
    assert len({target for target, _ in docs_links}) >= 8, "the reference pages are linked"
    pages = [README, *sorted((REPO / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target, fragment in relative_links(page):
            if not target.exists():
                broken.append(f"{page.name} → {target.relative_to(REPO)}: no such file")
            elif fragment and target.suffix == ".md" and fragment not in anchors(target):
                broken.append(f"{page.name} → {target.name}#{fragment}: no such heading")
    assert not broken, "\n".join(broken)
