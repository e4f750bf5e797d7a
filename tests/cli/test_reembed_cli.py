"""Issue 23 point 5 through the real command line: the sample ingested before GOOGLE_API_KEY
was set has no dense vectors; with the key, `grace ask` says so (on stderr, naming the
collection and the command), `grace reembed` adds Gemini's vectors from the stored text
(the fake Gemini server embeds them), and the note is gone."""

from __future__ import annotations

import json
from pathlib import Path

from tests.durable.helpers import copy_data_dir, grace_env, grace_here_async
from tests.fakes.fake_gemini import BATCH_EMBED, FakeGemini

QUESTION = "How many vacation days do new employees get?"


async def test_reembed_fixes_a_collection_ingested_before_the_key(
    sample_data_dir: Path, tmp_path: Path
) -> None:
    offline = grace_env(copy_data_dir(sample_data_dir, tmp_path / "data"))
    code, out, err = await grace_here_async(offline, "reembed")
    assert code == 2 and "GOOGLE_API_KEY" in err, err

    async with FakeGemini() as fake:
        env = {
            **offline,
            "GOOGLE_API_KEY": "test-key",
            "GRACE_LLM__BASE_URL": fake.base_url,
            "GRACE_LLM__RETRY_ATTEMPTS": "1",
        }
        code, out, err = await grace_here_async(env, "ask", QUESTION, "--json")
        assert code in (0, 1), err
        json.loads(out)  # still one JSON object on stdout
        [note] = [line for line in err.splitlines() if line.startswith("note:")]
        assert "'grace_docs' has no dense vectors" in note
        assert "grace reembed --collection grace_docs" in note

        embedded_before = len(fake.calls(BATCH_EMBED))
        code, out, err = await grace_here_async(env, "reembed")
        assert code == 0, err
        assert out.startswith("grace_docs: added gemini-embedding-001's dense vectors to ")
        assert len(fake.calls(BATCH_EMBED)) > embedded_before

        code, out, err = await grace_here_async(env, "reembed", "--collection", "grace_docs")
        assert code == 0 and out.strip() == "grace_docs: already has dense vectors", out
        code, out, err = await grace_here_async(env, "ask", QUESTION, "--json")
        assert code in (0, 1), err
        assert not [line for line in err.splitlines() if line.startswith("note:")], err
