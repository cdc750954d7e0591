"""The v2 API's pageToken: a cursor of ctmirror/read/cursors.py (the search method's form, of its own kind), with
the API's errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctmirror.read import cursors
from ctmirror.server.v2.errors import V2Error

if TYPE_CHECKING:
    from ctmirror.read.mirror import Mirror

KIND = "v2-page"


def write_page_token(mirror: Mirror, offset: int, fingerprint: str) -> str:
    return cursors.write(mirror, KIND, offset, fingerprint)


def page_token_state(token: str | None) -> str | None:
    """The state a page token names (checked in full, signature included, on that state's Mirror), so paging goes
    on where it began when a sync publishes in between."""
    cursor = cursors.parse(token, KIND) if token else None
    return None if cursor is None else cursor.state_id


def read_page_token(mirror: Mirror, token: str, fingerprint: str) -> int:
    """The offset a page token continues at: refused if altered, from another query, or from another state."""
    cursor = cursors.parse(token, KIND)
    if cursor is None:
        raise V2Error("pageToken is not one this server returned")
    if cursor.state_id != mirror.state_id:
        raise V2Error("pageToken belongs to an earlier state of the warehouse (a sync has published since): start "
                      "again without it")
    if not cursor.signed_by(mirror):
        raise V2Error("pageToken is not one this server returned")
    if cursor.fingerprint != fingerprint:
        raise V2Error("pageToken belongs to a query with other parameters")
    return cursor.offset
