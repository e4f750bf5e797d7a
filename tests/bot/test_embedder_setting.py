"""GRACE_EMBEDDER: which dense model the search gets (none offline by default: the
lexical-only path; the shipped encoder when asked; Gemini's with the Gemini model)."""

from __future__ import annotations

import pytest

from agent.errors import InvalidInputError
from agent.knowledge.lexical import HashingEmbedder
from agent.llm.sentence_encoder import SentenceEncoder
from bot.service.settings import Settings
from bot.service.wiring import build_models


@pytest.mark.parametrize("embedder", ["auto", "none"])
def test_offline_default_and_none_stay_lexical(
    clean_env: pytest.MonkeyPatch, embedder: str
) -> None:
    if embedder != "auto":  # auto: the default, left unset
        clean_env.setenv("GRACE_EMBEDDER", embedder)
    settings = Settings()
    assert settings.embedder == embedder
    _, agreement, dense = build_models(settings)
    assert dense is None
    assert isinstance(agreement, HashingEmbedder)


def test_use_m3_searches_with_the_shipped_encoder(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("GRACE_EMBEDDER", "use-m3")
    _, agreement, dense = build_models(Settings())
    assert isinstance(dense, SentenceEncoder)
    assert isinstance(agreement, HashingEmbedder)  # source agreement unchanged


def test_gemini_embedder_without_a_key_is_refused(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("GRACE_EMBEDDER", "gemini")
    with pytest.raises(InvalidInputError, match="GRACE_EMBEDDER=gemini"):
        build_models(Settings())


def test_gemini_model_keeps_its_own_embedder_unless_told(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("GOOGLE_API_KEY", "test-key")
    _, agreement, dense = build_models(Settings())
    assert dense is agreement and agreement.name.startswith("gemini")
    clean_env.setenv("GRACE_EMBEDDER", "use-m3")
    assert isinstance(build_models(Settings())[2], SentenceEncoder)
    clean_env.setenv("GRACE_EMBEDDER", "none")
    assert build_models(Settings())[2] is None
