"""Where a paged answer goes on, in one signed form for every surface: the search method's `pagination.cursor`
and the v2 API's `pageToken`.

A cursor holds the state it was issued on, the offset its next page starts at, and a fingerprint of the query's
parameters, signed with a key made from that state's own record (state.json): an edited cursor, or one another
warehouse issued, is refused, while a copy of the warehouse accepts its own. Its `kind` (the surface that wrote
it) is signed too, so a cursor of one surface is never taken by another. Each surface says in its own errors
why one is refused (ctmirror/read/methods.py, ctmirror/server/v2/page_tokens.py).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror

VERSION = 3
MAX_CHARACTERS = 1_000
MAX_OFFSET = 10_000_000


@dataclass(frozen=True)
class Cursor:
    kind: str
    state_id: str
    offset: int
    fingerprint: str
    signature: str

    def signed_by(self, mirror: Mirror) -> bool:
        """Whether `mirror`'s state issued this cursor (as it stands: nothing in it altered)."""
        return hmac.compare_digest(self.signature, _signature(mirror, self.kind, self.state_id, self.offset,
                                                              self.fingerprint))


def fingerprint(parameters: dict[str, Any]) -> str:
    """What a cursor remembers of its query: a digest of the parameters that choose and order its answers."""
    return hashlib.sha256(json.dumps(parameters, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _signature(mirror: Mirror, kind: str, state_id: str, offset: int, fingerprint: str) -> str:
    key = hashlib.sha256(json.dumps(mirror.state.meta, sort_keys=True, default=str).encode()).digest()
    signed = json.dumps([VERSION, kind, state_id, offset, fingerprint]).encode()
    return hmac.new(key, signed, hashlib.sha256).hexdigest()[:32]


def write(mirror: Mirror, kind: str, offset: int, fingerprint: str) -> str:
    """A cursor for the page of `mirror`'s state that starts at `offset`."""
    payload = {"v": VERSION, "s": mirror.state_id, "o": offset, "f": fingerprint,
               "h": _signature(mirror, kind, mirror.state_id, offset, fingerprint)}
    return base64.urlsafe_b64encode(json.dumps(payload, separators=(",", ":")).encode()).decode().rstrip("=")


def parse(text: object, kind: str) -> Cursor | None:
    """The cursor `text` holds, in form (its signature not yet checked: Cursor.signed_by), or None if it holds
    none: not a text, too long, not base64 JSON, another version's, an offset out of bounds."""
    try:
        if not isinstance(text, str) or len(text) > MAX_CHARACTERS:
            return None
        payload = json.loads(base64.urlsafe_b64decode((text + "=" * (-len(text) % 4)).encode()))
        cursor = Cursor(kind, payload["s"], payload["o"], payload["f"], payload["h"])
    except (ValueError, KeyError, TypeError, UnicodeError):
        return None
    if (payload.get("v") != VERSION or not isinstance(cursor.state_id, str) or type(cursor.offset) is not int
            or not 0 <= cursor.offset <= MAX_OFFSET or not isinstance(cursor.fingerprint, str)
            or not isinstance(cursor.signature, str)):
        return None
    return cursor
