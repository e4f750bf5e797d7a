"""The offline model: deterministic heuristics standing in for an LLM, no network.

It plans with the seed's complexity keywords and an ambiguity check, searches a two-part
question whole and part by part, retries a weak answer with searches that really differ
(agent/llm/rephrase.py), answers by quoting the sentences or table rows that hold the fact
(agent/evidence.py) with citations, each part of a two-part question answered, and
evaluates by overlap. It is honest about what it is: its name appears on every answer
it produces. The answer writing below `OfflineModel` stays in this module (a little over
500 lines) because it is the model's `reason` step and no other code calls it; the
evidence it quotes from is already its own module.
"""

from __future__ import annotations

import re
from collections import defaultdict

from agent.citations import strip_citations
from agent.evidence import (
    MIN_ANSWER_COVERAGE,
    Evidence,
    Unit,
    changed_copy,
    figure_conflict,
    figures,
    focus_question,
    gather,
    reading_order,
    select,
    version_conflict,
)
from agent.knowledge.lexical import lexical_similarity
from agent.knowledge.tokenize import tokenize
from agent.llm.rephrase import compared_items, own_words, question_parts, retry_searches
from agent.ports import (
    Evaluation,
    EvaluationRequest,
    LLMReply,
    PlanRequest,
    ReasoningRequest,
)
from agent.schemas import PlanDraft, PlanDraftStep, Source, TokenUsage

NOT_FOUND = "I could not find information about this in the knowledge base."
NOT_FOUND_JA = "ナレッジベースにこの質問に関する情報が見つかりませんでした。"

# Seed 000 §4.5 complexity keywords, with English equivalents.
_COMPLEXITY_KEYWORDS: list[tuple[str, float]] = [
    ("複数の", 0.2),
    ("比較", 0.15),
    ("最新", 0.1),
    ("理由", 0.1),
    ("方法", 0.1),
    ("multiple", 0.2),
    ("several", 0.2),
    ("compare", 0.15),
    ("comparison", 0.15),
    ("differ", 0.15),
    ("versus", 0.15),
    ("latest", 0.1),
    ("newest", 0.1),
    ("why", 0.1),
    ("reason", 0.1),
    ("how", 0.1),
]
_AMBIGUOUS = re.compile(
    r"\b(latest|newest|current|recent|last)\s+(version|release|update|one)\b"
    r"|最新(の)?(バージョン|版|リリース)",
    re.IGNORECASE,
)
_AMBIGUOUS_WORDS = {
    "latest", "newest", "current", "recent", "last", "version", "release", "update",
    "one", "what", "which", "the", "最新", "バージョン", "版", "リリース",
}  # fmt: skip
_SPLIT = re.compile(r"\s+(?:and|vs\.?|versus)\s+|と比較", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
# A single line break inside a paragraph is a hard wrap, not a sentence end; a line that
# starts a list item or a Q/A row is its own line.
_NEW_ITEM = r"(?!\s*(?:[-*•]|\d+[.)]|[QA][:：]))"
_CJK_WRAP = re.compile(r"(?<=[^\x00-\x7F])[ \t]*\n[ \t]*" + _NEW_ITEM + r"(?=[^\x00-\x7F])")
_WRAP = re.compile(r"[ \t]*(?<!\n)\n(?!\s*\n)[ \t]*" + _NEW_ITEM)
_NUMBER_UNIT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|percent)?\s*([A-Za-z]+|[一-龯ぁ-んァ-ヴー]+)")


def estimate_complexity(query: str) -> float:
    lowered = query.lower()
    score = 0.3
    for keyword, weight in _COMPLEXITY_KEYWORDS:
        if keyword in lowered:
            score += weight
    return min(1.0, round(score, 2))


def is_ambiguous(query: str) -> bool:
    """ "The latest version?" with no product named: guessing would be worse than asking."""
    if not _AMBIGUOUS.search(query):
        return False
    content = [t for t in tokenize(query) if t.lower() not in _AMBIGUOUS_WORDS]
    return not content


def _is_japanese(text: str) -> bool:
    return bool(re.search(r"[ぁ-んァ-ヴ一-龯]", text))


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class OfflineModel:
    """Implements `agent.ports.LanguageModel` without a network."""

    @property
    def name(self) -> str:
        return "offline"

    async def plan(self, request: PlanRequest) -> LLMReply[PlanDraft]:
        query = request.query
        steps: list[PlanDraftStep] = []
        complexity = estimate_complexity(query)
        replanning = request.feedback is not None or request.failure is not None
        if not replanning and is_ambiguous(query):
            steps.append(
                PlanDraftStep(
                    step_id=1,
                    action="ask_user",
                    description="Ask which product or component the question is about",
                    query="Which product or component do you mean?",
                    expected_output="the product the user means",
                )
            )
        parts = [p.strip() for p in _SPLIT.split(query) if p and len(p.strip()) > 3]
        # A replan searches for the human's change, or tries the next way of searching
        # that this run has not tried yet (agent/llm/rephrase.py); splitting the original
        # comparison again would drop the change and repeat the old plan.
        split = complexity > 0.6 and 1 < len(parts) <= 3 and not replanning
        if request.feedback:
            sub_queries = [f"{request.feedback} {query}"]
        elif request.failure:
            sub_queries = retry_searches(query, request.tried)
        elif split:
            # A comparison searches the whole question (which finds where the sides
            # speak of the same thing) and each side by its own words, not the question
            # cut at "and" ("Compare the X", "the Y: why do they differ?").
            sides = compared_items(query)
            sub_queries = [query, *sides] if sides else parts
        else:
            # A two-part question: the whole question, and each part on its own, so the
            # passage holding the second half is found even when the first half's
            # words dominate the whole question's search.
            sub_queries = [query, *question_parts(query)[1:]]
        first_search = len(steps) + 1
        for sub in sub_queries:
            steps.append(
                PlanDraftStep(
                    step_id=len(steps) + 1,
                    action="rag_search",
                    description=f"Search the knowledge base for: {sub[:120]}",
                    query=sub,
                    collection=request.default_collection,
                    depends_on=[1] if steps and steps[0].action == "ask_user" else [],
                    expected_output="relevant passages",
                    fallback="web_search",
                )
            )
        steps.append(
            PlanDraftStep(
                step_id=len(steps) + 1,
                action="reasoning",
                description="Answer from the passages found, with citations",
                depends_on=list(range(first_search, len(steps) + 1)),
                expected_output="a cited answer",
            )
        )
        draft = PlanDraft(
            complexity=complexity,
            steps=steps,
            success_criteria="an answer grounded in cited knowledge-base passages",
        )
        usage = TokenUsage(input_tokens=_approx_tokens(query), output_tokens=60, calls=1)
        return LLMReply(value=draft, usage=usage, model=self.name)

    async def reason(self, request: ReasoningRequest) -> LLMReply[str]:
        focus = focus_question(request.query, request.user_inputs)
        japanese = _is_japanese(request.query)
        answer = extract_answer(focus, request.passages, japanese=japanese)
        if not request.user_inputs:
            answer = complete_parts(request.query, answer, request.passages, japanese=japanese)
        answer = compare_documents(focus, request.passages, japanese=japanese) or answer
        usage = TokenUsage(
            input_tokens=sum(_approx_tokens(p.text) for p in request.passages)
            + _approx_tokens(focus),
            output_tokens=_approx_tokens(answer),
            calls=1,
        )
        return LLMReply(value=answer, usage=usage, model=self.name)

    async def evaluate(self, request: EvaluationRequest) -> LLMReply[Evaluation]:
        answer = request.answer
        usage = TokenUsage(
            input_tokens=_approx_tokens(answer) + _approx_tokens(request.query),
            output_tokens=20,
            calls=1,
        )
        if not answer.strip() or answer in (NOT_FOUND, NOT_FOUND_JA) or not request.passages:
            value = Evaluation(self_eval=0.1, coverage=0.0, rationale="no grounded answer")
            return LLMReply(value=value, usage=usage, model=self.name)
        sentences = [s for s in _sentences(strip_citations(answer)) if s]
        supported = [
            max((lexical_similarity(s, p.text) for p in request.passages), default=0.0)
            for s in sentences
        ]
        grounding = sum(supported) / len(supported) if supported else 0.0
        coverage = lexical_similarity(request.query, answer)
        self_eval = min(1.0, 0.4 + 0.6 * grounding)
        rationale = f"grounding {grounding:.2f}, coverage {coverage:.2f}"
        conflict = relevant_conflict(request.query, request.passages)
        if conflict:
            self_eval *= 0.6
            rationale += f"; sources disagree on {conflict}"
        value = Evaluation(
            self_eval=round(min(1.0, self_eval), 4),
            coverage=round(min(1.0, coverage), 4),
            rationale=rationale,
        )
        return LLMReply(value=value, usage=usage, model=self.name)


_NUMBER_WORDS = {
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}  # fmt: skip


def _figures(text: str) -> dict[str, set[str]]:
    """{unit: numbers} stated in a text, "one day" and "1 day" alike."""
    words = re.sub(
        r"\b(" + "|".join(_NUMBER_WORDS) + r")\b",
        lambda m: _NUMBER_WORDS[m.group(1).lower()],
        text,
        flags=re.IGNORECASE,
    )
    found: dict[str, set[str]] = defaultdict(set)
    for number, unit in _NUMBER_UNIT.findall(words):
        found[unit.lower().rstrip("s")].add(number)
    return found


def _figure_conflict(texts: list[tuple[str, str]]) -> tuple[str, set[str]] | None:
    """(unit, sources) when different sources give disjoint numbers for the same unit."""
    by_unit: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for text, source in texts:
        for unit, numbers in _figures(text).items():
            by_unit[unit][source] |= numbers
    for unit, per_source in by_unit.items():
        items = list(per_source.items())
        for i, (source_a, a) in enumerate(items):
            for source_b, b in items[i + 1 :]:
                if a.isdisjoint(b):
                    return unit, {source_a, source_b}
    return None


def relevant_conflict(query: str, passages: list[Source]) -> str | None:
    """Do the sentences that answer the question disagree on a figure ("3 days" vs "1 day")?
    Only sentences close to the question count: unrelated numbers are no conflict."""
    scored = [
        (lexical_similarity(query, sentence), sentence, p.source)
        for p in passages
        for sentence in _sentences(p.text)
    ]
    best = max((o for o, _, _ in scored), default=0.0)
    if best <= 0:
        return None
    texts = [(sentence, source) for o, sentence, source in scored if o >= best * 0.6]
    conflict = _figure_conflict(texts)
    return f"'{conflict[0]}' figures" if conflict else None


def _sentences(text: str) -> list[str]:
    """Sentences worth quoting: headings and breadcrumbs (no final punctuation) are not."""
    out = []
    text = _WRAP.sub(" ", _CJK_WRAP.sub("", text))
    for raw in _SENTENCE.split(text):
        sentence = re.sub(r"^[QA][:：]\s*", "", raw.strip().lstrip("#-*• ").strip())
        if len(sentence) >= 8 and sentence[-1] in ".!。！":  # questions are not answers
            out.append(sentence)
    return out


def extract_answer(query: str, passages: list[Source], *, japanese: bool) -> str:
    """The sentences or table rows that hold the fact, each citing its document. When a
    stale copy or another document gives a different figure, both are named, the
    current one first."""
    told = [p for p in passages if p.from_person]
    if told:
        # A person answered this very question in the thread: their words are the answer.
        return "\n".join(f"{p.text.strip()} [Source: {p.source}]" for p in told)
    vouched = verified_for(query, passages)
    if vouched is not None:
        return verified_reply(vouched, japanese=japanese)
    evidence = gather(query, passages)
    chosen = select(evidence)
    if not chosen or chosen[0].coverage < MIN_ANSWER_COVERAGE:
        return NOT_FOUND_JA if japanese else NOT_FOUND
    family = evidence.family
    if family[chosen[0].source].stale:
        # Quote the current document first when it says the same thing in its own words.
        current = [
            u
            for u in evidence.ranked
            if family[u.source].key == family[chosen[0].source].key
            and not family[u.source].stale
            and u.score >= 0.6 * chosen[0].score
        ]
        if current:
            chosen = [current[0], *[u for u in chosen[1:] if u.source != current[0].source]]
    lines = [f"{u.text} [Source: {u.source}]" for u in reading_order(chosen)]
    older = next((c for u in chosen if (c := changed_copy(evidence, u)) is not None), None)
    if older is not None and family[older.source].stale:
        lines.append(_older_note(older, japanese=japanese))
        return "\n".join(lines)
    rewritten = version_conflict(evidence, chosen)
    if rewritten is not None:
        # The older version answers the same question in other words: the current
        # version's answer first (with its sentence naming what changed), then the older.
        older, near = rewritten
        quoted = sorted([*chosen, *near], key=lambda u: (u.rank != chosen[0].rank, u.order))
        lines = [f"{u.text} [Source: {u.source}]" for u in quoted]
        lines.append(_older_note(older, japanese=japanese))
        return "\n".join(lines)
    if all(family[u.source].stale for u in chosen):
        # Only an outdated copy answers: say so, and which document replaced it.
        lines.append(_outdated_note(chosen[0].source, passages, evidence, japanese=japanese))
    other = figure_conflict(evidence, chosen)
    if other is not None:
        lines.append(f"{other.text} [Source: {other.source}]")
        lines.append(
            "⚠️ 情報源の内容が食い違っています。どちらが最新か確認してください。"
            if japanese
            else "⚠️ These sources disagree; check which one is current."
        )
    return "\n".join(lines)


SAME_QUESTION = 0.8
"""A verified answer answers a new question when each holds this share of the other's
content words: the same question in other order or with a word more, not a neighbour."""


def verified_for(query: str, passages: list[Source]) -> Source | None:
    """The saved verified answer to this very question among the passages, if any (a
    fresh one before one past its review date)."""
    same = [
        p
        for p in passages
        if p.verified is not None
        and lexical_similarity(query, p.verified.question) >= SAME_QUESTION
        and lexical_similarity(p.verified.question, query) >= SAME_QUESTION
    ]
    same.sort(key=lambda p: p.verified is None or not p.verified.fresh())
    return same[0] if same else None


def verified_reply(passage: Source, *, japanese: bool) -> str:
    """The verified answer's words (the passage less its question line), cited; past its
    review date, the answer says so."""
    assert passage.verified is not None
    first, _, rest = passage.text.partition("\n")
    words = (rest if first.strip() == passage.verified.question.strip() else passage.text).strip()
    lines = [f"{words} [Source: {passage.source}]"]
    if not passage.verified.fresh():
        due = f"{passage.verified.review_by:%Y-%m-%d}"
        lines.append(
            f"⚠️ この確認済みの回答は見直し期限（{due}）を過ぎています。"
            "今も正しいか確認してください。"
            if japanese
            else f"⚠️ This verified answer is past its review date ({due}); check it is still right."
        )
    return "\n".join(lines)


def _older_note(older: Unit, *, japanese: bool) -> str:
    """What an outdated version of the answer's document said instead."""
    return (
        f"⚠️ 古い版（{older.source}）では次のとおりでした: {older.text} [Source: {older.source}]"
        if japanese
        else f"⚠️ An older copy ({older.source}) says instead: {older.text} [Source: {older.source}]"
    )


def _outdated_note(
    source: str, passages: list[Source], evidence: Evidence, *, japanese: bool
) -> str:
    """The answer comes from an older copy only: name the version that replaced it."""
    key = evidence.family[source].key
    current = next(
        (p.superseded_by for p in passages if p.source == source and p.superseded_by), None
    )
    current = current or next(
        (s for s, f in evidence.family.items() if f.key == key and not f.stale), None
    )
    if japanese:
        newer = f"（最新版は {current}）" if current else ""
        return (
            f"⚠️ この回答は古い版（{source}）によるものです{newer}。最新の内容を確認してください。"
        )
    newer = f"; the current version is {current}" if current else ""
    return f"⚠️ This comes from an older copy ({source}){newer}. Check the current one."


PART_COVERED = 0.5
"""An answer already holding this share of a part's own words answers that part."""


def complete_parts(query: str, answer: str, passages: list[Source], *, japanese: bool) -> str:
    """The answer to the whole question, plus what answers a part it leaves out: each
    part of a two-part question is answered on its own from the same passages, and its
    sentences are added when the answer does not cover that part yet."""
    parts = question_parts(query)
    if not parts or any(p.from_person for p in passages) or verified_for(query, passages):
        return answer
    found = answer not in (NOT_FOUND, NOT_FOUND_JA)
    lines = answer.split("\n") if found else []
    for part in parts:
        said = set(tokenize(strip_citations("\n".join(lines))))
        own = own_words(part, parts)
        if own and len(own & said) >= PART_COVERED * len(own):
            continue
        reply = extract_answer(part, passages, japanese=japanese)
        if reply in (NOT_FOUND, NOT_FOUND_JA):
            continue
        # The part's own conflict notes are left out: the whole answer names conflicts.
        lines += [line for line in reply.split("\n") if line not in lines and "⚠️" not in line]
    return "\n".join(lines) if lines else answer


SIDE_NAMED = 0.5
"""A document stands for a side of a comparison when its name holds this share of the
side's words ("the employee handbook" → employee-handbook-2022.md)."""


def side_passages(side: str, passages: list[Source]) -> list[Source]:
    """The passages of the documents a comparison's side names (by file name or title):
    those naming most of the side's words; [] when no document is named by it."""
    wanted = set(tokenize(side))
    if not wanted:
        return []
    named: dict[str, int] = {}
    for p in passages:
        name = re.sub(r"[-_.]+", " ", p.source.rsplit(".", 1)[0])
        named[p.source] = len(wanted & set(tokenize(f"{name} {p.doc_title}")))
    best = max(named.values(), default=0)
    if best == 0 or best < SIDE_NAMED * len(wanted):
        return []
    return [p for p in passages if named[p.source] == best]


def compare_documents(query: str, passages: list[Source], *, japanese: bool) -> str | None:
    """A comparison of documents ("Compare the X policy and the Y handbook: why do they
    differ?") answered from each side's own documents: what each says about the thing the
    question asks, each cited, and a note when their figures disagree. None when the
    sides do not each name distinct documents among the passages, or one says nothing."""
    sides = compared_items(query)
    if len(sides) < 2:
        return None
    groups = [side_passages(side, passages) for side in sides]
    documents = [{p.source for p in group} for group in groups]
    if any(not d for d in documents) or len(set().union(*documents)) < sum(map(len, documents)):
        return None
    answers: list[list[str]] = []
    for group in groups:
        reply = extract_answer(query, group, japanese=japanese)
        if reply in (NOT_FOUND, NOT_FOUND_JA):
            return None
        answers.append([line for line in reply.split("\n") if "⚠️" not in line])
    stated = [[figures(strip_citations(line)) for line in lines] for lines in answers]
    units = [set().union(*(f.keys() for f in side)) for side in stated]
    shared = set.intersection(*units)
    if shared:
        # Where both sides give a figure for the same thing is where they compare: quote
        # those sentences, not every sentence of each document near the question's words.
        answers = [
            [line for line, found in zip(lines, side, strict=True) if shared & found.keys()]
            for lines, side in zip(answers, stated, strict=True)
        ]
    lines = list(dict.fromkeys(line for side in answers for line in side))
    if _sides_disagree([strip_citations(" ".join(side)) for side in answers]):
        lines.append(
            "⚠️ 情報源の内容が食い違っています。どちらが最新か確認してください。"
            if japanese
            else "⚠️ These sources disagree; check which one is current."
        )
    return "\n".join(lines)


def _sides_disagree(said: list[str]) -> bool:
    """Two sides give different numbers for the same unit ("3 days" vs "one day")."""
    stated = [figures(text) for text in said]
    for i, a in enumerate(stated):
        for b in stated[i + 1 :]:
            if any(unit in b and a[unit].isdisjoint(b[unit]) for unit in a):
                return True
    return False
