"""The Slack bot's composition root: builds every Slack part from `Settings` (and the
`Services` of `bot.service.wiring`) and hands each its collaborators explicitly —
the orchestrator its observers (the outbox publisher, the assistant pane's status line),
the intake one handler per kind of inbox item. Nothing registers itself elsewhere."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_sdk.web.async_client import AsyncWebClient

from agent.errors import InvalidInputError
from bot.service.channels import ChannelService
from bot.service.settings import Settings
from bot.service.sweeper import adopt_abandoned
from bot.service.tasks import TaskRunner
from bot.service.verified import VerifiedKeeper
from bot.service.wiring import Services, build_services
from bot.slack.access import RunAccess, SlackGroups, SlackMembers
from bot.slack.acting import ActingObserver
from bot.slack.app import build_app, make_slack_client
from bot.slack.conversation import process_question, process_reply
from bot.slack.delivery.assistant_status import STATUS_TIMEOUT_S, AssistantThreads, status_client
from bot.slack.delivery.plan_stream import PlanStreamer, StreamChoices
from bot.slack.delivery.publisher import SlackPublisher
from bot.slack.delivery.sessions import AgentSessions
from bot.slack.deps import BotDeps
from bot.slack.home.reach import ChannelKinds, HomeAccess
from bot.slack.home.tab import HomeTabs
from bot.slack.identity import resolve_identity
from bot.slack.installs import (
    OAuthParts,
    acting_handlers,
    build_oauth,
    sealer_of,
)
from bot.slack.intake import Handler, Intake
from bot.slack.items import InboxKind
from bot.slack.listeners.actions import process_click
from bot.slack.listeners.agent_view import DirectMessages, stop_session
from bot.slack.listeners.assistant import greet, take_question
from bot.slack.listeners.commands import process_command
from bot.slack.listeners.config import is_admin
from bot.slack.listeners.views import process_modify
from bot.slack.people import PersonNames
from bot.slack.senders import RunLimiter
from storage.channel_settings import SqlChannelSettings

log = logging.getLogger(__name__)


@dataclass
class Bot:
    """The Slack bot: its services, what its listeners and processors share, the intake
    that holds every acknowledged request, and the Bolt app."""

    services: Services
    deps: BotDeps
    intake: Intake
    app: AsyncApp

    async def recover(self) -> int:
        """Take over runs whose worker died (at-least-once for the interrupted step) and
        drive them on in the background; runs another live replica drives are left alone.
        Then process what a dead process left in the inbox, and deliver what it left in
        the outbox."""
        adopted = await adopt_abandoned(self.services)
        for state in adopted:
            self.deps.tasks.spawn(
                self.services.orchestrator.run_adopted(state), name=f"recover {state.run_id}"
            )
        left = await self.intake.resume()
        undelivered = await self.deps.publisher.resume()
        if left or undelivered:
            log.warning(
                "resumed %d Slack requests and %d undelivered runs left by an earlier process",
                left,
                undelivered,
            )
        return len(adopted)

    async def close(self, grace: float | None = None) -> None:
        """Wait for in-flight work — at most `grace` seconds, then stop it — hand the
        runs this process still holds to the next one, and close."""
        await self.intake.flush()
        if grace is None:
            await self.deps.tasks.idle()
        else:
            stopped = await self.deps.tasks.shutdown(grace)
            if stopped:
                log.warning("stopped %d tasks still running after %.0f s", stopped, grace)
        released = await self.services.orchestrator.release_leases()
        if released:
            log.warning("handed %d unfinished runs to the next process", len(released))
        # Deliver what is scheduled (answers that are ready should not wait for the next
        # process), but never wait out a long outage: the outbox keeps the rest.
        limit = 60.0 if grace is None else min(10.0, max(grace, 1.0))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.deps.publisher.drain(), timeout=limit)
        await self.deps.publisher.close()  # what is left stays in the outbox
        await self.intake.close()
        await self.services.close()


async def create_bot(settings: Settings, *, services: Services | None = None) -> Bot:
    """Wire the Slack app to the agent. Raises `InvalidInputError` for missing tokens, and
    a `GraceError` when Slack cannot tell who the bot is (asked once, here). In OAuth
    mode (bot/slack/installs.py) each workspace's token comes from its installation."""
    if settings.oauth_mode:
        sealer = sealer_of(settings)  # no key, no start: before anything is opened
    elif settings.slack_bot_token is None:
        raise InvalidInputError(
            "SLACK_BOT_TOKEN is not set. Create the app from manifest.yml, install it to "
            "your workspace and export its Bot User OAuth Token (xoxb-…)."
        )
    if settings.slack_app_token is None and settings.slack_signing_secret is None:
        raise InvalidInputError(
            "Set SLACK_SIGNING_SECRET for HTTP mode (Basic Information → Signing Secret), "
            "or SLACK_APP_TOKEN (xapp-…) for Socket Mode."
        )
    oauth: OAuthParts | None = None
    identity: AuthorizeResult | None = None
    if settings.oauth_mode:
        services = services or await build_services(settings)
        oauth = build_oauth(settings, services.engine, sealer=sealer, health=services.store.health)
        client: AsyncWebClient = oauth.client
        delivery_client: AsyncWebClient = oauth.client.variant(
            timeout=settings.slack.request_timeout_seconds, retries=False
        )
        pane_client: AsyncWebClient = oauth.client.variant(timeout=STATUS_TIMEOUT_S, retries=False)
    else:
        assert settings.slack_bot_token is not None
        client = make_slack_client(
            settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url
        )
        identity = await resolve_identity(client, wait_seconds=settings.slack.auth_timeout_seconds)
        services = services or await build_services(settings)
        delivery_client = make_slack_client(
            settings.slack_bot_token.get_secret_value(),
            base_url=settings.slack_api_url,
            timeout=settings.slack.request_timeout_seconds,
            retries=False,
        )
        pane_client = status_client(client)
    members = SlackMembers(client)
    channels = ChannelService(
        SqlChannelSettings(services.engine, health=services.store.health),
        settings,
        shared_thresholds=lambda: services.orchestrator.thresholds,
    )
    home = HomeTabs(
        client=delivery_client,  # like the outbox's: a failure is retried by whole passes
        store=services.store,
        access=HomeAccess(settings.approvers, members, ChannelKinds(client)),
        approvers=settings.approvers,
        channels=channels,
        is_admin=partial(is_admin, client),  # `/grace config`'s own check
        groups=SlackGroups(client),  # its own cache: what it shows grants nothing
    )
    publisher = SlackPublisher(
        client=delivery_client,
        store=services.store,
        deliveries=services.deliveries,
        delivery_deadline=settings.slack.delivery_deadline_seconds,
        home=home,
        streams=PlanStreamer(
            client=delivery_client,
            display=settings.slack.plan_display,
            choices=StreamChoices(services.store),
        ),
        sessions=AgentSessions(client=delivery_client, store=services.store),
    )
    publisher.replies = channels
    threads = AssistantThreads(client=pane_client, store=services.store)
    pane = threads if oauth is None else ActingObserver(threads)  # the run's team's token
    services = services.with_observers([publisher, pane])
    if oauth is not None:  # each workspace's own learned thresholds (bot/service/feedback.py)
        services.orchestrator.team_thresholds.update(
            await services.store.feedback.load_team_thresholds()
        )
    tasks = TaskRunner(settings.slack.max_concurrent_runs)
    deps = BotDeps(
        settings=settings,
        orchestrator=services.orchestrator,
        store=services.store,
        ledger=services.ledger,
        publisher=publisher,
        access=RunAccess(approvers=settings.approvers, members=members),
        tasks=tasks,
        verified=VerifiedKeeper(
            store=services.store.verified,
            index=services.knowledge_base,
            review_days=settings.knowledge.verified_review_days,
        ),
        names=PersonNames(client),
        limits=RunLimiter(
            per_thread=settings.slack.runs_per_thread_per_minute,
            per_user=settings.slack.runs_per_user_per_minute,
        ),
        channels=channels,
        home=home,
        installations=oauth.installations if oauth is not None else None,
        groups=SlackGroups(client),
    )
    handlers = inbox_handlers(deps, client=client, threads=threads, pane_client=pane_client)
    intake = Intake(
        inbox=services.inbox,
        tasks=tasks,
        processors=handlers if oauth is None else acting_handlers(handlers),
    )
    secret = settings.slack_signing_secret
    app = build_app(
        deps,
        intake,
        client=client,
        signing_secret=secret.get_secret_value() if secret else None,
        identity=identity,
        oauth_settings=oauth.settings if oauth is not None else None,
    )
    return Bot(services=services, deps=deps, intake=intake, app=app)


def inbox_handlers(
    deps: BotDeps,
    *,
    client: AsyncWebClient,
    threads: AssistantThreads,
    pane_client: AsyncWebClient,
) -> dict[InboxKind, Handler[Any]]:
    """What the intake does with each kind of stored request, and in which lane: every
    kind is here, so a kind without a handler is a gap in this table, nowhere else."""
    return {
        InboxKind.QUESTION: Handler(partial(process_question, deps), intake_lane=True),
        InboxKind.REPLY: Handler(partial(process_reply, deps)),
        InboxKind.ASSISTANT_QUESTION: Handler(
            partial(take_question, deps, threads), intake_lane=True
        ),
        InboxKind.THREAD_STARTED: Handler(partial(greet, deps, threads)),
        InboxKind.CLICK: Handler(partial(process_click, deps, client)),
        InboxKind.MODIFY: Handler(partial(process_modify, deps)),
        InboxKind.COMMAND: Handler(partial(process_command, deps)),
        # Stop never waits behind busy runs
        InboxKind.SESSION_STOPPED: Handler(partial(stop_session, deps), intake_lane=True),
        InboxKind.MESSAGES_OPENED: Handler(DirectMessages(deps, pane_client).opened),
    }
