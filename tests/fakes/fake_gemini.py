"""A small fake of the Gemini Developer API over real HTTP, for tests.

Tests drive the real `google-genai` client against it (SPEC §3), so what is tested is
what runs in production: request paths, headers, JSON bodies, retries, error mapping.

Paths the SDK (google-genai 3.x) really calls, checked by running it:
- `POST /v1beta/models/{model}:generateContent` (key in the `x-goog-api-key` header)
- `POST /v1beta/models/{model}:batchEmbedContents` for `embed_content`, even for a single
  text; `:embedContent` is answered too, in case another SDK version uses it.

Usage::

    async with FakeGemini() as fake:
        client = make_gemini_client(api_key="test-key", base_url=fake.base_url)
        fake.reply_json({"complexity": 0.2, "steps": [...]})
        fake.fail(429, times=2)            # queued before or after, order is kept
        ...
        assert fake.calls(GENERATE)[0].api_key == "test-key"

Every request is recorded; each route has a FIFO queue of canned responses, and when the
queue is empty a default responder answers (a fixed text, a sample object for the
request's responseSchema, or deterministic embeddings).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import math
import random
import re
import socket
import struct
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiohttp import web

GENERATE = "generateContent"
BATCH_EMBED = "batchEmbedContents"
EMBED = "embedContent"
ROUTES = (GENERATE, BATCH_EMBED, EMBED)

DEFAULT_TEXT = "This is a fake Gemini answer. [Source: fake]"
FAKE_MODEL_VERSION = "gemini-fake-001"

_PATH = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    408: "DEADLINE_EXCEEDED",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    502: "UNAVAILABLE",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}


# --------------------------------------------------------------------------- records


@dataclass
class RecordedRequest:
    """One request as the fake saw it."""

    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased, so lookups do not depend on the client's spelling."""
    body: Any
    """The parsed JSON body, or None when it was not JSON."""
    raw: str
    model: str | None = None
    route: str | None = None
    """`generateContent`, `batchEmbedContents`, `embedContent` or another method name."""
    received_at: float = 0.0
    """`time.monotonic()` when the request arrived (to check waits between retries)."""
    answered_at: float = 0.0
    """`time.monotonic()` when the fake sent its answer (after any delay)."""
    response_usage: dict[str, int] = field(default_factory=dict)
    """The `usageMetadata` the fake answered with (empty for errors): what was billed."""

    @property
    def api_key(self) -> str | None:
        return self.headers.get("x-goog-api-key")

    @property
    def generation_config(self) -> dict[str, Any]:
        if isinstance(self.body, dict):
            config = self.body.get("generationConfig")
            if isinstance(config, dict):
                return config
        return {}

    @property
    def prompt(self) -> str:
        """All text parts of a generateContent request (system instruction included)."""
        if not isinstance(self.body, dict):
            return ""
        texts: list[str] = []
        system = self.body.get("systemInstruction")
        if isinstance(system, dict):
            texts.extend(_texts_of(system))
        for content in self.body.get("contents") or []:
            texts.extend(_texts_of(content))
        return "\n".join(texts)

    @property
    def embed_texts(self) -> list[str]:
        """The texts of an embedding request, in order."""
        if not isinstance(self.body, dict):
            return []
        if "requests" in self.body:
            return ["\n".join(_texts_of(r.get("content"))) for r in self.body["requests"]]
        return ["\n".join(_texts_of(self.body.get("content")))]


def _texts_of(content: Any) -> list[str]:
    if not isinstance(content, dict):
        return []
    return [p["text"] for p in content.get("parts") or [] if isinstance(p, dict) and "text" in p]


@dataclass
class CannedResponse:
    """What the fake answers: a JSON body (or raw text), a status, headers, a delay."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    """Seconds to wait before answering (to exercise client timeouts)."""
    hold: asyncio.Event | None = None
    """Answer only once this is set: a model call that lasts exactly as long as a test needs."""
    raw: str | None = None
    """Send this text verbatim instead of `body` as JSON (e.g. an HTML error page)."""
    reset: bool = False
    """Answer nothing: reset the connection (TCP RST) once the request has been read."""


Responder = Callable[[RecordedRequest], CannedResponse | Awaitable[CannedResponse]]
"""Answers a request when its route's queue is empty; may be sync or async."""


# --------------------------------------------------------------------------- bodies


def generate_body(
    text: str,
    *,
    prompt_tokens: int | None = 10,
    output_tokens: int | None = 20,
    thoughts_tokens: int | None = None,
    finish_reason: str = "STOP",
    model_version: str = FAKE_MODEL_VERSION,
) -> dict[str, Any]:
    """A successful generateContent body whose first candidate says `text`."""
    usage: dict[str, int] = {}
    if prompt_tokens is not None:
        usage["promptTokenCount"] = prompt_tokens
    if output_tokens is not None:
        usage["candidatesTokenCount"] = output_tokens
    if thoughts_tokens is not None:
        usage["thoughtsTokenCount"] = thoughts_tokens
    usage["totalTokenCount"] = sum(usage.values())
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": finish_reason,
                "index": 0,
            }
        ],
        "usageMetadata": usage,
        "modelVersion": model_version,
        "responseId": hashlib.sha1(text.encode()).hexdigest()[:16],
    }


def json_body(data: Any, **kwargs: Any) -> dict[str, Any]:
    """A generateContent body whose text is `data` as JSON (a str is sent verbatim)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return generate_body(text, **kwargs)


def blocked_body(reason: str = "SAFETY", *, prompt_tokens: int = 10) -> dict[str, Any]:
    """The prompt itself was blocked: no candidates, only promptFeedback."""
    return {
        "promptFeedback": {"blockReason": reason},
        "usageMetadata": {"promptTokenCount": prompt_tokens, "totalTokenCount": prompt_tokens},
        "modelVersion": FAKE_MODEL_VERSION,
    }


def empty_candidate_body(finish_reason: str = "SAFETY") -> dict[str, Any]:
    """A candidate with no content, stopped for `finish_reason`."""
    return {
        "candidates": [{"finishReason": finish_reason, "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "totalTokenCount": 10},
        "modelVersion": FAKE_MODEL_VERSION,
    }


def error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """A Google API error body, as the real service sends it."""
    name = _STATUS_NAMES.get(status, "UNKNOWN")
    return {
        "error": {
            "code": status,
            "message": message or f"fake {name.lower().replace('_', ' ')}",
            "status": name,
        }
    }


def fake_embedding(text: str, dimension: int) -> list[float]:
    """A deterministic unit vector for `text`: hashed words and CJK bigrams, so texts that
    share words are closer than texts that do not (useful for similarity tests)."""
    vector = [0.0] * dimension
    features: list[str] = []
    for token in re.findall(r"\w+", text.lower()):
        if token.isascii():
            features.append(token)
        else:  # Japanese has no spaces: character bigrams carry the overlap
            features.extend(token[i : i + 2] for i in range(max(1, len(token) - 1)))
    for feature in features:
        digest = hashlib.sha256(feature.encode()).digest()
        index = int.from_bytes(digest[:4], "big") % dimension
        vector[index] += 1.0 if digest[4] & 1 else -1.0
    if not any(vector):
        rng = random.Random(hashlib.sha256(text.encode()).digest())
        vector = [rng.uniform(-1.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def sample_from_schema(schema: Any) -> Any:
    """A minimal valid instance of a Gemini (OpenAPI-style) or JSON schema."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return sample_from_schema(schema[key][0])
    kind = str(schema.get("type", "OBJECT" if "properties" in schema else "STRING")).upper()
    if "default" in schema:
        return schema["default"]
    if kind == "OBJECT":
        props = schema.get("properties") or {}
        return {name: sample_from_schema(sub) for name, sub in props.items()}
    if kind == "ARRAY":
        return [sample_from_schema(schema.get("items") or {})]
    if kind == "NUMBER":
        return 0.5
    if kind == "INTEGER":
        return 1
    if kind == "BOOLEAN":
        return False
    if kind == "NULL":
        return None
    return "fake"


def _reset(request: web.Request) -> None:
    """Drop the request's connection with a TCP RST (SO_LINGER 0, then close): the client
    sees "connection reset by peer", as when a proxy or load balancer kills it."""
    transport = request.transport
    assert transport is not None, "the request has no connection to reset"
    sock = transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


# --------------------------------------------------------------------------- server


class FakeGemini:
    """The fake server. `async with FakeGemini() as fake:` starts it on a random port."""

    def __init__(
        self,
        *,
        default_text: str = DEFAULT_TEXT,
        embedding_dimension: int = 768,
        host: str = "127.0.0.1",
    ) -> None:
        self.default_text = default_text
        self.embedding_dimension = embedding_dimension
        self.host = host
        self.requests: list[RecordedRequest] = []
        self._queues: dict[str, deque[CannedResponse]] = {route: deque() for route in ROUTES}
        self._responders: dict[str, Responder] = {
            GENERATE: self._default_generate,
            BATCH_EMBED: self._default_batch_embed,
            EMBED: self._default_embed,
        }
        self._runner: web.AppRunner | None = None
        self._port: int | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> FakeGemini:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        # a short shutdown: a test that timed out must not wait for a slow canned answer
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets, "fake Gemini did not bind a socket"
        self._port = server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeGemini:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("FakeGemini is not started")
        return self._port

    @property
    def base_url(self) -> str:
        """What to pass as `base_url` (the SDK adds `/v1beta/...`)."""
        return f"http://{self.host}:{self.port}"

    def grace_env(self) -> dict[str, str]:
        """The environment that points `grace` at this fake, one attempt per call (a
        scripted failure is not retried away)."""
        return {
            "GOOGLE_API_KEY": "test-key",
            "GRACE_LLM__BASE_URL": self.base_url,
            "GRACE_LLM__RETRY_ATTEMPTS": "1",
        }

    # ------------------------------------------------------------------ scripting

    def enqueue(self, route: str, *responses: CannedResponse | dict[str, Any]) -> None:
        """Queue responses for `route`; a dict is a 200 JSON body."""
        queue = self._queues.setdefault(route, deque())
        for response in responses:
            queue.append(
                response if isinstance(response, CannedResponse) else CannedResponse(response)
            )

    def reply_text(self, text: str, *, times: int = 1, delay: float = 0.0, **kwargs: Any) -> None:
        """Queue a generateContent answer saying `text` (kwargs: see `generate_body`)."""
        for _ in range(times):
            self.enqueue(GENERATE, CannedResponse(generate_body(text, **kwargs), delay=delay))

    def reply_json(self, data: Any, *, times: int = 1, **kwargs: Any) -> None:
        """Queue a generateContent answer whose text is `data` as JSON (str verbatim)."""
        for _ in range(times):
            self.enqueue(GENERATE, json_body(data, **kwargs))

    def fail(
        self,
        status: int,
        *,
        times: int = 1,
        route: str = GENERATE,
        message: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Queue `times` error answers (e.g. 429 twice, then whatever comes next)."""
        for _ in range(times):
            self.enqueue(
                route, CannedResponse(error_body(status, message), status, dict(headers or {}))
            )

    def set_responder(self, route: str, responder: Responder) -> None:
        """Answer `route` with `responder(request)` whenever its queue is empty."""
        self._responders[route] = responder

    def calls(self, route: str | None = None) -> list[RecordedRequest]:
        """Recorded requests, optionally only those of one route."""
        return [r for r in self.requests if route is None or r.route == route]

    def billed(self) -> tuple[int, int]:
        """(input, output) tokens of every usageMetadata answered so far — what a real
        account would be charged; thinking tokens count as output."""
        prompt = sum(r.response_usage.get("promptTokenCount", 0) for r in self.requests)
        output = sum(
            r.response_usage.get("candidatesTokenCount", 0)
            + r.response_usage.get("thoughtsTokenCount", 0)
            for r in self.requests
        )
        return prompt, output

    def pending(self, route: str = GENERATE) -> int:
        """Canned responses not yet used (a test can assert they were all consumed)."""
        return len(self._queues.get(route, ()))

    def reset(self) -> None:
        """Forget recorded requests and queued responses."""
        self.requests.clear()
        for queue in self._queues.values():
            queue.clear()

    # ------------------------------------------------------------------ defaults

    def _default_generate(self, request: RecordedRequest) -> CannedResponse:
        config = request.generation_config
        if config.get("responseMimeType") == "application/json":
            schema = config.get("responseSchema") or config.get("responseJsonSchema")
            return CannedResponse(json_body(sample_from_schema(schema) if schema else {}))
        return CannedResponse(generate_body(self.default_text))

    def _dimension_of(self, item: dict[str, Any]) -> int:
        dimension = item.get("outputDimensionality")
        return int(dimension) if dimension else self.embedding_dimension

    def _default_batch_embed(self, request: RecordedRequest) -> CannedResponse:
        items = request.body.get("requests", []) if isinstance(request.body, dict) else []
        embeddings = [
            {
                "values": fake_embedding(
                    "\n".join(_texts_of(i.get("content"))), self._dimension_of(i)
                )
            }
            for i in items
        ]
        return CannedResponse({"embeddings": embeddings})

    def _default_embed(self, request: RecordedRequest) -> CannedResponse:
        body = request.body if isinstance(request.body, dict) else {}
        text = "\n".join(_texts_of(body.get("content")))
        return CannedResponse(
            {"embedding": {"values": fake_embedding(text, self._dimension_of(body))}}
        )

    # ------------------------------------------------------------------ HTTP

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.text()
        try:
            body: Any = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            body = None
        match = _PATH.match(request.path)
        record = RecordedRequest(
            method=request.method,
            path=request.path,
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
            raw=raw,
            model=match.group("model") if match else None,
            route=match.group("method") if match else None,
            received_at=time.monotonic(),
        )
        self.requests.append(record)
        canned = await self._respond(record)
        if canned.status == 200 and isinstance(canned.body, dict):
            usage = canned.body.get("usageMetadata")
            if isinstance(usage, dict):
                record.response_usage = {k: int(v) for k, v in usage.items()}
        if canned.hold is not None:
            await canned.hold.wait()
        if canned.delay:
            await asyncio.sleep(canned.delay)
        record.answered_at = time.monotonic()
        if canned.reset:
            _reset(request)
            return web.Response()  # never sent: the connection is gone
        if canned.raw is not None:
            return web.Response(text=canned.raw, status=canned.status, headers=canned.headers)
        return web.json_response(canned.body, status=canned.status, headers=canned.headers)

    async def _respond(self, record: RecordedRequest) -> CannedResponse:
        if record.method != "POST" or record.route is None:
            return CannedResponse(error_body(404, f"fake Gemini: no route {record.path}"), 404)
        queue = self._queues.get(record.route)
        if queue:
            return queue.popleft()
        responder = self._responders.get(record.route)
        if responder is None:
            return CannedResponse(
                error_body(404, f"fake Gemini: method {record.route} not implemented"), 404
            )
        result = responder(record)
        if inspect.isawaitable(result):
            result = await result
        return result
