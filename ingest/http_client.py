"""A polite client for the registry's API: a minimum interval between requests, and retries with capped
exponential backoff and jitter on 429, 5xx, timeouts, dropped connections and truncated bodies, honouring
Retry-After. Any other 4xx is terminal and quotes the URL and the server's message."""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

import httpx

from ctmirror.core.errors import RetryableHarvestError, TerminalHarvestError

log = logging.getLogger("ctmirror.harvest")

DEFAULT_BASE_URL = "https://clinicaltrials.gov"


@dataclass
class RetryPolicy:
    attempts: int = 8
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_retry_after: float = 300.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        # Full jitter over a capped exponential: spreads clients that failed together.
        return random.uniform(self.base_delay / 2, min(self.max_delay, self.base_delay * 2 ** attempt))


@dataclass
class Response:
    status: int
    url: str
    body: bytes
    headers: dict[str, str]
    data: object = None  # the parsed JSON body, when one was expected

    def json(self) -> object:
        return self.data if self.data is not None else json.loads(self.body)


@dataclass
class PoliteClient:
    base_url: str = DEFAULT_BASE_URL
    min_interval: float = 1.2
    timeout: float = 60.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    transport: httpx.BaseTransport | None = None
    retries: int = 0  # requests retried so far, for the run's summary
    # told of each retry as it happens ("connection failed ...; retry 3 of 8 in 8 s; check the network or --base-url")
    on_retry: Callable[[str], None] | None = None
    _last_request: float = 0.0

    def __post_init__(self) -> None:
        self.http = httpx.Client(base_url=self.base_url.rstrip("/"), timeout=self.timeout, transport=self.transport,
                                 headers={"User-Agent": "ctmirror (offline mirror; polite harvester)",
                                          "Accept": "application/json"})

    def close(self) -> None:
        self.http.close()

    def get(self, path: str, params: dict | None = None, *, expect_json: bool = True,
            follow_redirects: bool = True, parse: Callable[[bytes], object] = json.loads) -> Response:
        """One GET, retried as the policy says. Raises TerminalHarvestError for a 4xx other than 429, and
        RetryableHarvestError when the attempts run out."""
        last_error: RetryableHarvestError | None = None
        for attempt in range(self.retry.attempts):
            if attempt:
                self.retries += 1
                pause = self.retry.delay(attempt - 1, last_error.retry_after if last_error else None)
                message = (f"{last_error}; retry {attempt} of {self.retry.attempts - 1} in {pause:.0f} s; "
                           "check the network or --base-url")
                log.info(message)
                if self.on_retry is not None:
                    self.on_retry(message)
                time.sleep(pause)
            try:
                return self._once(path, params, expect_json, follow_redirects, parse)
            except RetryableHarvestError as exc:
                last_error = exc
        raise RetryableHarvestError(f"gave up after {self.retry.attempts} attempts: {last_error}") from last_error

    def _once(self, path: str, params: dict | None, expect_json: bool, follow_redirects: bool,
              parse: Callable[[bytes], object]) -> Response:
        wait = self._last_request + self.min_interval - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last_request = time.monotonic()
        url = f"{self.base_url.rstrip('/')}{path}"
        try:
            reply = self.http.get(path, params=params, follow_redirects=follow_redirects)
            body = reply.content  # reads the whole body: a dropped connection raises here
        except httpx.TimeoutException as exc:
            raise RetryableHarvestError(f"timed out: GET {url}: {type(exc).__name__}") from exc
        except httpx.TransportError as exc:
            raise RetryableHarvestError(f"connection failed: GET {url}: {type(exc).__name__}: {exc}") from exc
        shown = str(reply.request.url)
        if reply.status_code == 429 or reply.status_code >= 500:
            raise RetryableHarvestError(f"HTTP {reply.status_code} from GET {shown}: {_message(body)}",
                                        retry_after=_retry_after(reply.headers.get("Retry-After")))
        if 400 <= reply.status_code < 500:
            error = TerminalHarvestError(f"HTTP {reply.status_code} from GET {shown}: {_message(body)}",
                                         hint="check --base-url and the parameters; retrying will not help")
            error.status = reply.status_code  # type: ignore[attr-defined]
            raise error
        data = None
        if expect_json and reply.status_code == 200:
            try:
                data = parse(body)  # parsed here once: a cut-short body is retried like a dropped one
            except ValueError as exc:
                raise RetryableHarvestError(f"truncated or malformed JSON from GET {shown} "
                                            f"({len(body)} bytes): {exc}") from exc
        return Response(reply.status_code, shown, body, dict(reply.headers), data)


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _message(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict) and "message" in parsed:
            text = str(parsed["message"])
    except ValueError:
        pass
    return text[:300] or "(empty body)"
