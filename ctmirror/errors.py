"""The one error tree of ctmirror.

    CtmirrorError                    every error we raise on purpose; `str()` is the one line users see
    ├── InputError                   a file or argument we were given is unusable (names the file/argument)
    │   ├── InvalidArgument          a method argument is out of range or malformed; carries `code`,
    │   │                            `invalid_input` and `recovery_hint` for the contract's error envelope
    │   └── InvalidNctId             an NCT identifier is not NCT + 8 digits
    ├── WarehouseError               the warehouse is missing, locked, or in an unexpected state
    │   └── StateNotFound            a pinned state or cursor's state is no longer kept
    └── HarvestError                 talking to the registry failed
        ├── RetryableHarvestError    worth retrying (429, 5xx, timeouts, dropped connections)
        └── TerminalHarvestError     retrying will not help (4xx other than 429, a changed response shape)

Retryable versus terminal is a property of the type, so the harvester never parses messages.
"""

from __future__ import annotations


class CtmirrorError(Exception):
    """Base of every error ctmirror raises on purpose."""

    hint: str | None = None

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class InputError(CtmirrorError):
    """Something we were given cannot be used as it is."""


class InvalidArgument(InputError):
    """A method argument is malformed or out of range (the contract's INVALID_INPUT)."""

    code = "INVALID_INPUT"

    def __init__(self, message: str, *, invalid_input: object = None, recovery_hint: str | None = None) -> None:
        super().__init__(message, hint=recovery_hint)
        self.invalid_input = invalid_input
        self.recovery_hint = recovery_hint or "Correct the argument and call again."

    def envelope(self) -> dict:
        """The contract's error envelope."""
        return {
            "success": False,
            "error": {
                "code": self.code,
                "message": str(self),
                "recovery_hint": self.recovery_hint,
                "invalid_input": None if self.invalid_input is None else str(self.invalid_input),
            },
        }


class InvalidNctId(InvalidArgument):
    """An NCT identifier that is not `NCT` followed by eight digits."""


class WarehouseError(CtmirrorError):
    """The warehouse cannot be opened or written as asked."""


class StateNotFound(WarehouseError):
    """A published state that is no longer kept (or never existed)."""

    code = "STATE_EXPIRED"


class HarvestError(CtmirrorError):
    """Talking to the registry's API failed."""

    retryable = False


class RetryableHarvestError(HarvestError):
    """A failure that may pass: rate limiting, server errors, timeouts, dropped connections."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TerminalHarvestError(HarvestError):
    """A failure that retrying will not fix."""
