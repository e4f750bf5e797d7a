"""Which sentence of the retrieved passages holds the answer, and how sure we can be.

Shared by the offline model (which quotes the best units as its answer) and the
confidence scorer (which reads the same evidence for any model's answer). One module per
job: `segments` cuts passages into units, `patterns` holds the per-language tables of
question and value words, `questions` types the question with them, `terms` spells
words one way, `scoring` ranks and selects units, `conflicts` finds disagreeing
sources, `names` finds proper names, `features` reads an answer's evidence for the
confidence scorer, `replies` classifies a person's reply. Which documents are versions
of one another is agent/knowledge/versions.py's job (`source_families`).
"""

from agent.evidence.conflicts import (
    changed_copy,
    figure_conflict,
    figures,
    version_conflict,
    versions_disagree,
)
from agent.evidence.features import answer_features
from agent.evidence.names import name_missing, names
from agent.evidence.questions import (
    asked_period,
    asked_unit,
    focus_question,
    has_value,
    is_two_part,
    question_type,
    question_types,
    typed_value,
)
from agent.evidence.replies import supplies_facts
from agent.evidence.scoring import (
    MIN_ANSWER_COVERAGE,
    Evidence,
    Unit,
    gather,
    reading_order,
    select,
)
from agent.evidence.segments import split_blocks, split_units
from agent.evidence.terms import QUESTION_WORDS, phrases, terms
from agent.knowledge.versions import Family, families, source_families

__all__ = [
    "MIN_ANSWER_COVERAGE",
    "QUESTION_WORDS",
    "Evidence",
    "Family",
    "Unit",
    "answer_features",
    "asked_period",
    "asked_unit",
    "changed_copy",
    "families",
    "figure_conflict",
    "figures",
    "focus_question",
    "gather",
    "has_value",
    "is_two_part",
    "name_missing",
    "names",
    "phrases",
    "question_type",
    "question_types",
    "reading_order",
    "select",
    "source_families",
    "split_blocks",
    "split_units",
    "supplies_facts",
    "terms",
    "typed_value",
    "version_conflict",
    "versions_disagree",
]
