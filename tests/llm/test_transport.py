"""The provider-neutral transport errors: told as host and reason, whatever raised them."""

from __future__ import annotations

import errno

import httpx

from agent.llm.transport import describe_transport_error, is_timeout


def test_an_os_error_is_told_by_its_reason() -> None:
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed ('10.0.0.1', 443)")

    assert describe_transport_error(refused) == "connection refused"
    assert describe_transport_error(OSError(errno.ENETUNREACH, "x")) == "network unreachable"


def test_an_unknown_error_keeps_its_text_without_object_reprs() -> None:
    error = httpx.ConnectError("TLS failed ssl:<ssl.SSLContext object at 0x7f00deadbeef> at host")

    described = describe_transport_error(error)

    assert described == "ConnectError: TLS failed at host", described
    assert not is_timeout(error)
    assert is_timeout(httpx.ReadTimeout("slow"))
