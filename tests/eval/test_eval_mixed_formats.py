"""`grace eval --kb DIR` on a knowledge base of mixed formats: a PDF, a Word file, an HTML
page and Markdown, made here; each question is answered from its own document."""

from __future__ import annotations

import json
from pathlib import Path

from tests.durable.helpers import grace_env, grace_here
from tests.knowledge.documents_made import write_docx, write_pdf

CASES = [
    {
        "id": "pdf",
        "kind": "answerable",
        "q": "How long must the passphrase of an encrypted laptop disk be?",
        "expect_any": ["14 characters"],
        "source": ["security.pdf"],
    },
    {
        "id": "docx",
        "kind": "answerable",
        "q": "Up to what price per night are hotels approved without asking?",
        "expect_any": ["180 EUR"],
        "source": ["travel.docx"],
    },
    {
        "id": "html",
        "kind": "answerable",
        "q": "When does the canteen serve lunch?",
        "expect_any": ["11:30"],
        "source": ["canteen.html"],
    },
    {
        "id": "md",
        "kind": "answerable",
        "q": "How much does the monthly parking permit cost?",
        "expect_any": ["35 EUR"],
        "source": ["parking.md"],
    },
]


def _mixed_kb(folder: Path) -> Path:
    folder.mkdir()
    write_pdf(
        folder / "security.pdf",
        [
            ["Security handbook", "Badges are issued at the front desk."],
            [
                "Laptops",
                "Laptop disks must be encrypted with a passphrase of at least 14 characters.",
            ],
            ["Visitors", "Visitors are escorted at all times."],
        ],
        title="Security handbook",
    )
    write_docx(folder / "travel.docx", title="Travel policy")
    (folder / "canteen.html").write_text(
        "<html><head><title>Canteen</title></head><body><nav>Home | About</nav><main>"
        "<h1>Canteen</h1><p>The canteen serves lunch from 11:30 to 14:00 on weekdays.</p>"
        "</main><footer>(c) Example</footer></body></html>",
        encoding="utf-8",
    )
    (folder / "parking.md").write_text(
        "# Parking\n\nEmployees park in garage B; the monthly permit costs 35 EUR.\n",
        encoding="utf-8",
    )
    return folder


def test_eval_on_a_knowledge_base_of_pdf_word_html_and_markdown(tmp_path: Path) -> None:
    kb = _mixed_kb(tmp_path / "kb")
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(case) for case in CASES) + "\n", encoding="utf-8")

    result = grace_here(grace_env(tmp_path / "data"), "eval", str(cases), "--kb", str(kb), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    records = {record["id"]: record for record in report["records"]}
    assert set(records) == {"pdf", "docx", "html", "md"}
    for case in CASES:
        record = records[str(case["id"])]
        assert record["error"] is None, record
        assert record["top5"][0] == case["source"][0], record  # found in its own format
        assert record["correct"] is True, record
    assert report["metrics"]["recall_at_5"] == 1.0
    assert report["metrics"]["accuracy"] == 1.0
