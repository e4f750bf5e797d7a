"""`grace verified list | add | remove`: verified answers for operators, the same ones
`/grace verified` lists and the Save button adds (bot/service/verified.py keeps the
database and the knowledge base in step)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from bot.cli.errors import CommandError, ExitCode

if TYPE_CHECKING:
    from agent.ports import VerifiedAnswer
    from bot.service.verified import VerifiedKeeper
    from bot.service.wiring import Services


def _keeper(services: Services) -> VerifiedKeeper:
    from bot.service.verified import VerifiedKeeper

    return VerifiedKeeper(
        store=services.store.verified,
        index=services.knowledge_base,
        review_days=services.settings.knowledge.verified_review_days,
    )


def _json(answer: VerifiedAnswer) -> dict[str, object]:
    data = answer.model_dump(mode="json")
    data["fresh"] = answer.verification().fresh()
    data["citation"] = answer.verification().label
    return data


async def run_verified(args: argparse.Namespace, services: Services) -> int:
    keeper = _keeper(services)
    if args.verified_command == "list":
        answers = await keeper.recent(limit=1000)
        if args.json:
            print(json.dumps([_json(a) for a in answers], ensure_ascii=False))
            return 0
        if not answers:
            print("no verified answers")
            return 0
        for answer in answers:
            verification = answer.verification()
            due = "" if verification.fresh() else "  (past its review date)"
            print(f"{answer.answer_id}  {verification.label}{due}")
            print(f"  Q: {answer.question}")
            print(f"  A: {answer.answer}")
            if answer.permalink:
                print(f"  {answer.permalink}")
        return 0
    if args.verified_command == "add":
        question, answer_text = args.question.strip(), args.answer.strip()
        by = args.by.strip().lstrip("@")
        if not question or not answer_text or not by:
            raise CommandError(
                "invalid_input",
                "--question, --answer and --by must not be empty",
                ExitCode.BAD_INPUT,
            )
        saved, _ = await keeper.save(
            question=question, answer=answer_text, verified_by=by, verified_by_name=by
        )
        if args.json:
            print(json.dumps(_json(saved), ensure_ascii=False))
        else:
            print(
                f"saved verified answer {saved.answer_id} ({saved.verification().label}; "
                f"review by {saved.review_by:%Y-%m-%d})"
            )
        return 0
    if not await keeper.remove(args.answer_id):
        raise CommandError(
            "not_found", f"no verified answer {args.answer_id!r}", ExitCode.BAD_INPUT
        )
    print(f"removed verified answer {args.answer_id}")
    return 0
