"""Page tokens: the offset a page ends at, signed for the state and the query it belongs to."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from typing import TYPE_CHECKING, Any

from ctmirror.server.v2.errors import V2Error

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror


# ---- page tokens ---------------------------------------------------------------------------------------------
MAX_PAGE_OFFSET = 10_000_000


def _token_key(mirror: Mirror) -> bytes:
    return hashlib.sha256(b"v2-page:" + json.dumps(mirror.state.meta, sort_keys=True, default=str).encode()).digest()


def write_page_token(mirror: Mirror, offset: int, fingerprint: str) -> str:
    body = json.dumps({"s": mirror.state_id, "o": offset, "f": fingerprint}, separators=(",", ":"), sort_keys=True)
    mac = hmac.new(_token_key(mirror), body.encode(), hashlib.sha256).hexdigest()[:24]
    return base64.urlsafe_b64encode(f"{body}|{mac}".encode()).decode().rstrip("=")


def _decoded_token(token: str) -> tuple[str, str, dict[str, Any]]:
    """(body, signature, payload) of a page token; ValueError (or KeyError, TypeError, UnicodeError) if it is not
    one in form."""
    if len(token) > 500:
        raise ValueError
    body, _, mac = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().rpartition("|")
    payload = json.loads(body)
    if not isinstance(payload, dict):
        raise ValueError
    return body, mac, payload


def page_token_state(token: str | None) -> str | None:
    """The state a page token names (checked in full, signature included, on that state's Mirror), so paging goes
    on where it began when a sync publishes in between."""
    try:
        state = _decoded_token(token)[2].get("s") if token else None
    except (ValueError, KeyError, TypeError, UnicodeError):
        return None
    return state if isinstance(state, str) else None


def read_page_token(mirror: Mirror, token: str, fingerprint: str) -> int:
    """The offset a page token continues at: refused if altered, from another query, or from another state."""
    try:
        body, mac, payload = _decoded_token(token)
        offset = payload["o"]
        if not isinstance(offset, int) or not 0 <= offset <= MAX_PAGE_OFFSET:
            raise ValueError
    except (ValueError, KeyError, TypeError, UnicodeError):
        raise V2Error("pageToken is not one this server returned") from None
    expected = hmac.new(_token_key(mirror), body.encode(), hashlib.sha256).hexdigest()[:24]
    if payload.get("s") != mirror.state_id:
        raise V2Error("pageToken belongs to an earlier state of the warehouse (a sync has published since): start "
                      "again without it")
    if not hmac.compare_digest(mac, expected):
        raise V2Error("pageToken is not one this server returned")
    if payload.get("f") != fingerprint:
        raise V2Error("pageToken belongs to a query with other parameters")
    return offset
