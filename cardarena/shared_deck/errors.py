"""Error codes shared by the rules, the protocol and the client.

They live at the bottom layer so that the rules engine can raise the very code the server
sends, and the client can turn it back into the same typed value.
"""

from __future__ import annotations

import os
from enum import IntEnum


class ErrorCode(IntEnum):
    """Every ``ERR <code> <Description>`` the server can send; the name is the description."""

    NoCardWithSuchId = 900
    NotEnoughMana = 901
    NotYourCard = 903
    InactiveCard = 905
    CardNotInHand = 906
    DrawLimitExceeded = 907
    BurnLimitExceeded = 908
    NoSuchAttacker = 910
    BlockingAlreadyFinished = 911
    CardNotOnBoard = 912
    NotYourTurn = 913
    WrongTarget = 915
    SpellTargetNotOnBoard = 916
    DeckIsEmpty = 918
    HandLimitExceeded = 919
    NotYourMatch = 930
    GameHasEnded = 932
    GameHasNotEndedYet = 933
    AuthenticationFailed = 940
    NotLoggedIn = 941
    LoggedInElsewhere = 942
    """Sent on an older connection, just before it is closed, when its player logs in again."""
    UnknownCommand = 950
    WrongArguments = 951
    LineTooLong = 952
    TooManyCommands = 953
    NoSuchMatch = 954


class GameError(Exception):
    """A refused command; carries the code the server answers with."""

    def __init__(self, code: ErrorCode) -> None:
        super().__init__(code)  # the text is made only if printed: refusals are frequent
        self.code = code

    def __str__(self) -> str:
        return f"{self.code.value} {self.code.name}"

    @property
    def line(self) -> str:
        """The answer line, without its newline."""
        return f"ERR {self.code.value} {self.code.name}"


class NetworkError(OSError):
    """A port that cannot be listened on or a server that cannot be reached, said in one
    line that names the address (the command line prints it as it is)."""

    @classmethod
    def about(cls, doing: str, host: str | None, port: int, error: OSError) -> NetworkError:
        """``cannot listen on HOST:PORT: Address already in use`` from asyncio's error,
        whose own text repeats the address as a tuple after an errno in brackets."""
        reason = os.strerror(error.errno) if error.errno and error.errno > 0 else error.strerror
        shown = f"[{host}]" if host and ":" in host else (host or "*")
        return cls(error.errno, f"cannot {doing} {shown}:{port}: {reason or error}")

    def __str__(self) -> str:
        return str(self.strerror)
