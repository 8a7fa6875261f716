"""The exceptions zarrkit raises.

Each is a subclass of :class:`ZarrkitError` and of the builtin exception
Python code already catches for that kind of failure, so both
``except zarrkit.ZarrkitError`` and ``except FileNotFoundError`` work.
"""

from __future__ import annotations

__all__ = [
    "ZarrkitError",
    "NodeNotFoundError",
    "NodeExistsError",
    "SelectionError",
    "SelectionTypeError",
    "InvalidValueError",
    "DataTypeError",
    "StorageError",
    "ReadOnlyError",
    "MemberNotFoundError",
]


class ZarrkitError(Exception):
    """The base of every exception zarrkit raises."""


class NodeNotFoundError(ZarrkitError, FileNotFoundError):
    """No array or group at the path (or not the kind asked for)."""


class NodeExistsError(ZarrkitError, FileExistsError):
    """A node is already where one is being created."""


class SelectionError(ZarrkitError, IndexError):
    """A selection does not fit the array (out of bounds, zero step, wrong mask shape)."""


class SelectionTypeError(ZarrkitError, TypeError):
    """An index object of a kind NumPy does not index with."""


class InvalidValueError(ZarrkitError, ValueError):
    """An invalid document, option or value (including values that do not broadcast)."""


class DataTypeError(ZarrkitError, TypeError):
    """A data type zarrkit's Python API cannot give or take."""


class StorageError(ZarrkitError, OSError):
    """The store failed, or a chunk could not be decoded or encoded."""


class ReadOnlyError(ZarrkitError, PermissionError):
    """A write to a node opened with mode ``"r"``."""


class MemberNotFoundError(NodeNotFoundError, KeyError):
    """A group has no member of that name (``group["name"]``)."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""
