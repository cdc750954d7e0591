"""The one error tree of ctmirror.

    CtmirrorError                    every error we raise on purpose; `str()` is the one line users see
    ├── InputError                   a file or argument we were given is unusable (names the file/argument)
    │   ├── InvalidArgument          a method argument is out of range or malformed
    │   └── InvalidNctId             an NCT identifier is not NCT + 8 digits
    ├── NotFound                     what was asked for does not exist (a trial by NCT ID)
    ├── WarehouseError               the warehouse is missing, locked, damaged, or in an unexpected state
    │   └── StateNotFound            a pinned state or cursor's state is no longer kept
    └── HarvestError                 talking to the registry failed
        ├── RetryableHarvestError    worth retrying (429, 5xx, timeouts, dropped connections)
        └── TerminalHarvestError     retrying will not help (4xx other than 429, a changed response shape)

Every error carries what each surface needs, so each maps any error the same way: `code` (the contract's
error code), `hint` (what to do next), `invalid_input`, `envelope()` (the contract's error envelope),
`exit_code` (the CLI's) and `http_status`. Retryable versus terminal is a property of the type, so the
harvester never parses messages.
"""

from __future__ import annotations


class CtmirrorError(Exception):
    """Base of every error ctmirror raises on purpose."""

    code = "INTERNAL_ERROR"
    hint: str | None = None
    default_hint = "Run the command again with --debug and report what it shows."
    exit_code = 2
    http_status = 500

    def __init__(self, message: str, *, hint: str | None = None, invalid_input: object = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint
        self.invalid_input = invalid_input

    @property
    def recovery_hint(self) -> str:
        return self.hint or self.default_hint

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


class InputError(CtmirrorError):
    """Something we were given cannot be used as it is."""

    code = "INVALID_INPUT"
    default_hint = "Correct the input and call again."
    http_status = 400


class InvalidArgument(InputError):
    """A method argument is malformed or out of range (the contract's INVALID_INPUT)."""

    default_hint = "Correct the argument and call again."

    def __init__(self, message: str, *, invalid_input: object = None, recovery_hint: str | None = None) -> None:
        super().__init__(message, hint=recovery_hint, invalid_input=invalid_input)


class InvalidNctId(InvalidArgument):
    """An NCT identifier that is not `NCT` followed by eight digits."""


class NotFound(CtmirrorError):
    """What was asked for does not exist in the state that answered."""

    code = "NOT_FOUND"
    default_hint = "Check the identifier; a study removed from the registry keeps its last version here."
    exit_code = 1
    http_status = 404


class WarehouseError(CtmirrorError):
    """The warehouse cannot be opened or written as asked."""

    code = "WAREHOUSE_UNAVAILABLE"
    default_hint = "Check --warehouse points at a warehouse; `ctmirror status` says what it holds."
    http_status = 503


class StateNotFound(WarehouseError):
    """A published state that is no longer kept (or never existed)."""

    code = "STATE_EXPIRED"
    default_hint = "Start again without the cursor, or pin states you need with `ctmirror pin STATE`."
    http_status = 410


class HarvestError(CtmirrorError):
    """Talking to the registry's API failed."""

    code = "UPSTREAM_ERROR"
    default_hint = "Check the network or --base-url, then run the same command again: it resumes."
    http_status = 502
    retryable = False


class RetryableHarvestError(HarvestError):
    """A failure that may pass: rate limiting, server errors, timeouts, dropped connections."""

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class TerminalHarvestError(HarvestError):
    """A failure that retrying will not fix."""
