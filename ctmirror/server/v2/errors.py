"""What a v2 request gets when the API would refuse it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


class V2Error(Exception):
    """A request the v2 API would refuse: `status` and a plain-text message, as the API answers."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


