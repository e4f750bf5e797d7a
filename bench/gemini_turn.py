"""One question's turn on the Gemini path: model calls, tokens, time, agent overhead.

    python -m bench.gemini_turn [--latency 0.3] [--questions N]

A fake Gemini server (the test fake, real HTTP, the real google-genai client) answers
every call — plans, answers, evaluations, embeddings — after `--latency` seconds (300 ms
by default), as a fast real model would. The agent runs on the real parts: the sample
knowledge base in Qdrant local mode with dense Gemini embeddings (ingested first, not
timed), the real orchestrator, an in-memory run store.

For each question it prints the generateContent calls, the embedding requests, how many
of all those ran one after another (overlapping calls count once), the tokens, the time
from question to answer, the model time (when at least one call was in flight) and the
agent's own overhead = total − model time (wall clock, so a busy machine inflates it),
and the CPU time the agent's thread used (the fake runs in a thread of its own), which
is what the overhead would be on an idle machine. Targets: a simple question takes at most 3
sequential generateContent calls; overhead under 5 % of the turn. It is a benchmark:
the exit code is 0 whatever the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from agent.config import AgentConfig, InterventionConfig
from agent.knowledge.ingest import SAMPLE_KB_DIR, ingest_paths
from agent.knowledge.qdrant_kb import open_knowledge_base
from agent.llm.gemini import CallPolicy, GeminiEmbedder, GeminiModel, make_gemini_client
from agent.memory_store import InMemoryRunStore
from agent.orchestrator import Orchestrator
from agent.schemas import RunState
from tests.fakes.fake_gemini import (
    BATCH_EMBED,
    GENERATE,
    CannedResponse,
    FakeGemini,
    RecordedRequest,
    fake_embedding,
    generate_body,
    json_body,
)
from tests.fakes.vacation_run import plan_for

QUESTIONS = [
    ("How many vacation days do new employees get?", "vacation-policy.md"),
    ("What is the deadline for submitting expense reports?", "expense-policy.md"),
    ("How many days per week can I work remotely?", "remote-work-policy.md"),
    ("経費精算の締め切りはいつですか？", "経費精算ガイド.md"),
]


class SlowModel:
    """Answers like a model that takes `latency` seconds per call."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    def generate(self, request: RecordedRequest) -> CannedResponse:
        system = request.body.get("systemInstruction", {}).get("parts", [{}])[0].get("text", "")
        question = request.prompt.split("<question>\n", 1)[-1].split("\n</question>", 1)[0]
        if "planning agent" in system:
            body = json_body(plan_for(question), prompt_tokens=1200, output_tokens=150)
        elif "strict reviewer" in system:
            evaluation = {"self_eval": 0.95, "coverage": 0.95, "rationale": "grounded"}
            body = json_body(evaluation, prompt_tokens=1500, output_tokens=40)
        else:
            cited = request.prompt.split('<passage id="1" source="', 1)[-1].split('"', 1)[0]
            answer = f"The policy says so. [Source: {cited}]"
            body = generate_body(answer, prompt_tokens=2500, output_tokens=120)
        return CannedResponse(body, delay=self.latency)

    def embed(self, request: RecordedRequest) -> CannedResponse:
        items = request.body.get("requests", [])
        vectors = [
            {"values": fake_embedding(text, int(item.get("outputDimensionality") or 768))}
            for text, item in zip(request.embed_texts, items, strict=True)
        ]
        return CannedResponse({"embeddings": vectors}, delay=self.latency)


@dataclass
class Turn:
    question: str
    status: str
    generate_calls: int
    embed_calls: int
    sequential: int
    replans: int
    tokens_in: int
    tokens_out: int
    total: float
    model_time: float
    cpu: float
    """CPU time of the agent's thread (the fake runs in another): overhead on an idle box."""

    @property
    def overhead(self) -> float:
        return self.total - self.model_time


def _busy(requests: list[RecordedRequest]) -> tuple[float, int]:
    """Time with at least one call in flight, and how many stretches of it there were."""
    spans = sorted((r.received_at, r.answered_at) for r in requests if r.answered_at)
    busy, stretches, end = 0.0, 0, float("-inf")
    for start, stop in spans:
        if start > end:
            stretches += 1
            busy += stop - start
            end = stop
        elif stop > end:
            busy += stop - end
            end = stop
    return busy, stretches


async def turn(
    orchestrator: Orchestrator, fake: FakeGemini, model: SlowModel, question: str, source: str
) -> Turn:
    fake.requests.clear()
    started, cpu_started = time.monotonic(), time.thread_time()
    state: RunState = await orchestrator.start(question, asker="U_BENCH")
    total, cpu = time.monotonic() - started, time.thread_time() - cpu_started
    requests = list(fake.requests)
    model_time, sequential = _busy(requests)
    return Turn(
        question=question,
        status=state.status.value,
        generate_calls=sum(1 for r in requests if r.route == GENERATE),
        embed_calls=sum(1 for r in requests if r.route == BATCH_EMBED),
        sequential=sequential,
        replans=state.replan_count,
        tokens_in=state.token_usage.input_tokens,
        tokens_out=state.token_usage.output_tokens,
        total=total,
        model_time=model_time,
        cpu=cpu,
    )


@contextmanager
def fake_in_its_own_thread() -> Iterator[FakeGemini]:
    """The fake server on its own event loop and thread, so its work (parsing requests,
    encoding answers) is not counted as the agent's."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    fake = FakeGemini()
    asyncio.run_coroutine_threadsafe(fake.start(), loop).result()
    try:
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.close(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


async def main(latency: float, count: int, repeat: int = 3) -> None:
    logging.basicConfig(level=logging.WARNING)
    model = SlowModel(latency)
    with tempfile.TemporaryDirectory() as tmp:
        with fake_in_its_own_thread() as fake:
            client = make_gemini_client(api_key="bench", base_url=fake.base_url)
            policy = CallPolicy()
            embedder = GeminiEmbedder(client=client, dimension=768, policy=policy)
            kb = open_knowledge_base(path=Path(tmp) / "qdrant", url=None, embedder=embedder)
            try:
                reports = await ingest_paths(kb, [SAMPLE_KB_DIR])
                chunks = sum(r.chunks for r in reports)
                ingest_requests = len(fake.calls(BATCH_EMBED))
                fake.set_responder(GENERATE, model.generate)
                fake.set_responder(BATCH_EMBED, model.embed)
                orchestrator = Orchestrator(
                    llm=GeminiModel(client=client, policy=policy),
                    knowledge_base=kb,
                    store=InMemoryRunStore(),
                    embedder=embedder,
                    # the fake's hashed embeddings score modestly: no pause after the search
                    config=AgentConfig(intervention=InterventionConfig(pause_on_confirm=False)),
                )
                await turn(orchestrator, fake, model, *QUESTIONS[0])  # warm-up, not shown
                turns = [await turn(orchestrator, fake, model, q, s) for q, s in QUESTIONS[:count]]
            finally:
                await kb.close()
                await client.aio.aclose()
    print(
        f"fake Gemini latency {latency * 1000:.0f} ms per call; sample KB {chunks} chunks "
        f"ingested in {ingest_requests} embedding requests (not timed); median of "
        f"{repeat} runs per question by overhead\n"
    )
    header = (
        f"{'question':<52} {'status':<9} {'gen':>3} {'emb':>3} {'seq':>3} {'rpl':>3} "
        f"{'tokens in/out':>13} {'total':>7} {'model':>7} {'overhead':>14} {'agent CPU':>14}"
    )
    print(header)
    print("-" * len(header))
    for t in turns:
        share = t.overhead / t.total * 100 if t.total else 0.0
        print(
            f"{t.question[:52]:<52} {t.status:<9} {t.generate_calls:>3} {t.embed_calls:>3} "
            f"{t.sequential:>3} {t.replans:>3} {f'{t.tokens_in}/{t.tokens_out}':>13} "
            f"{t.total * 1000:>5.0f}ms {t.model_time * 1000:>5.0f}ms "
            f"{t.overhead * 1000:>6.0f}ms {share:>4.1f}% "
            f"{t.cpu * 1000:>6.0f}ms {t.cpu / t.total * 100:>4.1f}%"
        )
    simple = [t for t in turns if t.replans == 0 and t.status == "answered"] or turns
    worst_gen = max(t.generate_calls for t in simple)
    worst_share = max(t.overhead / t.total for t in turns) * 100
    worst_cpu = max(t.cpu / t.total for t in turns) * 100
    print(
        f"\ngenerateContent calls per simple question (no replan) ≤ 3: "
        f"{'PASS' if worst_gen <= 3 else 'FAIL'} (max {worst_gen}); agent overhead < 5 %: "
        f"{'PASS' if worst_share < 5 else 'FAIL'} (max {worst_share:.1f} % wall; the "
        f"agent's own CPU time max {worst_cpu:.1f} % of the turn)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--repeat", type=int, default=3, help="runs per question (median)")
    args = parser.parse_args()
    asyncio.run(main(args.latency, args.questions, max(1, args.repeat)))
