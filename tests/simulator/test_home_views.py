"""The fake Slack's App Home: `views.publish` as Slack checks it, driven by slack_sdk."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.simulator.webapi import FakeSlack

USER = "U0ALICE"
HOME = {"type": "home", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "hi"}}]}


async def test_views_publish_keeps_each_persons_home_and_checks_it_as_slack_does() -> None:
    async with FakeSlack() as fake:
        client = AsyncWebClient(token="xoxb-test", base_url=fake.base_url)
        first = await client.views_publish(user_id=USER, view=HOME)
        assert first["view"]["type"] == "home" and first["view"]["hash"]
        home = fake.home.view(USER)
        assert home is not None and home.view["blocks"] == HOME["blocks"]
        assert fake.home.view("U0BOB") is None, "one Home tab per person"

        again = await client.views_publish(user_id=USER, view=HOME, hash=first["view"]["hash"])
        assert again["view"]["id"] == first["view"]["id"]
        assert fake.home.views[USER].publishes == 2

        refused = {
            "hash_conflict": {"user_id": USER, "view": HOME, "hash": first["view"]["hash"]},
            "invalid_arguments": {"user_id": USER, "view": {**HOME, "type": "modal"}},
        }
        for error, params in refused.items():
            with pytest.raises(SlackApiError) as caught:
                await client.views_publish(**params)
            assert caught.value.response["error"] == error
        with pytest.raises(SlackApiError) as caught:
            await client.api_call("views.publish", json={"view": HOME})
        assert caught.value.response["error"] == "invalid_arguments", "user_id is required"
