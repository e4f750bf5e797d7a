"""The plan as tasks: one per step, in plain words, for the stream and the plan message."""

from __future__ import annotations

from agent.schemas import ReplanRecord, ReplanStrategy, ReplanTrigger, RunStatus, Source
from blocks.plan_card import (
    MARKDOWN_CHUNK_LIMIT,
    MAX_TASKS,
    answer_markdown,
    plan_card_message,
    plan_chunks,
    plan_tasks,
    title_chunk,
)
from bot.simulator.streams import check_chunks
from tests import samples
from tests.blocks.payloads import assert_valid


def test_each_step_is_a_task_whose_status_follows_the_step() -> None:
    run = samples.state(n_steps=6)
    tasks = plan_tasks(run)
    assert [t.task_id for t in tasks] == ["1", "2", "3", "4", "5", "6"]
    # success, partial, failed, skipped, running, pending
    assert [t.status for t in tasks] == [
        "complete",
        "complete",
        "error",
        "complete",
        "in_progress",
        "pending",
    ]
    assert tasks[0].title == run.plan.steps[0].description  # type: ignore[union-attr]
    assert tasks[0].details == "Looked in the knowledge base for “query 1”"
    assert tasks[4].details == "Looking in the web for “query 5”"
    assert tasks[2].output.startswith("did not work: timed out")
    assert tasks[5].output == ""


def test_a_step_not_run_yet_has_not_looked_anywhere() -> None:
    """Issue 23 (f): pending steps said "Looked in the knowledge base for …" already."""
    run = samples.state(n_steps=6)
    del run.step_results[1]
    assert plan_tasks(run)[0].details == "Will look in the knowledge base for “query 1”"


def test_chunks_are_valid_slack_sdk_chunks() -> None:
    run = samples.state(n_steps=4)
    chunks = [title_chunk(run).to_dict(), *[c.to_dict() for c in plan_chunks(run)]]
    assert check_chunks(chunks) == chunks
    assert chunks[0] == {"type": "plan_update", "title": "Looking into your question"}
    assert {c["status"] for c in chunks[1:]} <= {"pending", "in_progress", "complete", "error"}


def test_documents_with_a_web_address_are_url_sources() -> None:
    run = samples.state(n_steps=1)
    result = run.step_results[1]
    result.sources = [
        Source(source="https://example.com/policy", text="x", doc_title="Policy"),
        Source(source="handbook.md", text="y"),
    ]
    (task,) = plan_tasks(run)
    assert task.sources == (("https://example.com/policy", "Policy"),)
    (chunk,) = plan_chunks(run)
    assert chunk.to_dict()["sources"] == [
        {"type": "url", "url": "https://example.com/policy", "text": "Policy"}
    ]


def test_steps_an_earlier_plan_showed_are_closed_after_a_replan() -> None:
    run = samples.state(n_steps=2)
    run.replan_history = [
        ReplanRecord(
            trigger=ReplanTrigger.STEP_FAILED,
            strategy=ReplanStrategy.FULL,
            reason="r",
            old_steps=["a", "b", "c", "d"],
        )
    ]
    tasks = plan_tasks(run)
    assert [t.task_id for t in tasks] == ["1", "2", "3", "4"]
    assert [t.status for t in tasks[2:]] == ["complete", "complete"]
    assert "plan changed" in tasks[3].output


def test_a_long_plan_is_capped() -> None:
    run = samples.state(n_steps=MAX_TASKS + 5)
    tasks = plan_tasks(run)
    assert len(tasks) == MAX_TASKS + 1 and tasks[-1].title == "5 more steps"


def test_the_plan_message_is_a_plan_block_of_task_cards() -> None:
    run = samples.state(n_steps=5)
    payload = assert_valid(plan_card_message(run))
    (plan,) = [b for b in payload if b["type"] == "plan"]
    assert [t["type"] for t in plan["tasks"]] == ["task_card"] * 5
    assert plan["tasks"][0]["output"]["type"] == "rich_text"
    assert payload[0]["type"] == "header"  # the question stays the message's header


def test_the_answer_is_markdown_escaped_links_visible_and_split() -> None:
    run = samples.state(
        status=RunStatus.ANSWERED, answer="Hi <!channel> [here](https://a.example/x)"
    )
    (chunk,) = answer_markdown(run)
    assert chunk.text == "Hi &lt;!channel&gt; here (https://a.example/x)"
    run.final_answer = ("word " * 3000 + "\n") * 2
    chunks = answer_markdown(run)
    assert len(chunks) >= 2 and all(len(c.text) <= MARKDOWN_CHUNK_LIMIT for c in chunks)
    assert "".join(c.text for c in chunks) == run.final_answer.strip()
