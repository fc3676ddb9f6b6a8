"""Text for a terminal: the strings users give hyperlab are shown, never obeyed.

Experiment names, parameter names and values, metric names and errors may hold control
characters: an escape sequence (``"\\x1b[2J"`` clears the screen, others retitle the window or
write to the clipboard), a carriage return that hides what came before it, a bidirectional
override that shows a line in another order. Every command that prints a table or a summary
(and the progress and resume lines of a run) passes such strings through ``printable``, which
writes each of those characters as its escape, and prints them with rich's markup off, so that
``[bold]`` or ``[link=...]`` in a name is shown as it is. ``hyperlab logs`` alone prints a
trial's output as it was written, as ``cat`` would.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

# C0 and C1 controls and DEL; line and paragraph separators; the bidirectional embeddings,
# overrides, isolates and marks; lone surrogates (which cannot even be written as UTF-8)
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, newlines: bool = False) -> str:
    """``text`` with each character that a terminal would act on, or that would hide or
    reorder what is shown, written as its Python escape (``\\x1b``, ``\\n``, ``\\u202e``).

    Args:
        text: A string from a user (or from a trial): a name, a value, an error.
        newlines: Keep line feeds as they are (a multi-line error); escaped otherwise, so that
            a table cell or a summary line stays one line.

    Example:
        >>> printable("run\\x1b[2J 1")
        'run\\\\x1b[2J 1'
    """
    if newlines:
        return _UNSAFE.sub(lambda m: m[0] if m[0] == "\n" else _escape(m[0]), text)
    return _UNSAFE.sub(lambda m: _escape(m[0]), text)
