"""A small LaTeX arithmetic parser for the common answer shapes, so they skip the full grammar.

latex2sympy2's ANTLR grammar costs about 20 ms per new expression, most of the time a batch of
distinct answers takes. This parser reads numbers, single-letter variables, `\\pi`, `e`, `i`,
`+ - \\cdot \\times * /`, implicit products, powers, `\\frac`/`\\dfrac`/`\\tfrac`, `\\sqrt` and
`\\sqrt[n]` and brackets, and builds the same values latex2sympy2 builds for them (evaluated). It
gives up (None) on anything else, and the caller falls back to the full grammar.
"""

from __future__ import annotations

import re

import sympy

_TOKEN = re.compile(
    r"\s+|\\[,;:! ]|\\left\b|\\right\b"
    r"|(?P<number>\d+(?:\.\d+)?|\.\d+)"
    r"|(?P<command>\\[a-zA-Z]+)"
    r"|(?P<letter>[a-zA-Z])"
    r"|(?P<symbol>[-+*/^(){}\[\]])"
)
_FUNCTION_LETTERS = set("fghFGH")
_FRACTIONS = {"\\frac", "\\dfrac", "\\tfrac"}
_TIMES = {"\\cdot", "\\times"}
_KNOWN_COMMANDS = _FRACTIONS | _TIMES | {"\\sqrt", "\\pi"}


class _GiveUp(Exception):
    pass


_WORDS = re.compile(r"[a-zA-Z]{3,}|[a-zA-Z]\s+[a-zA-Z]")
# "15\\frac{1}{6}" is a mixed number to the full grammar; leave it there.
_MIXED_NUMBER = re.compile(r"\d\s*\\[dt]?frac")


def _tokens(text: str) -> list[tuple[str, str]] | None:
    if _WORDS.search(re.sub(r"\\[a-zA-Z]+", " ", text)) or _MIXED_NUMBER.search(text):
        return None  # words, not a product of variables
    tokens: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            return None
        position = match.end()
        kind = match.lastgroup
        if kind is None:
            continue  # spacing, \left, \right
        value = match.group(kind)
        if kind == "command" and value not in _KNOWN_COMMANDS:
            return None
        tokens.append((kind, value))
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], imaginary_unit: bool) -> None:
        self.tokens = tokens
        self.index = 0
        self.imaginary_unit = imaginary_unit

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise _GiveUp
        self.index += 1
        return token

    def expect(self, value: str) -> None:
        if self.take()[1] != value:
            raise _GiveUp

    def expression(self):
        value = self.term()
        while (token := self.peek()) is not None and token[1] in ("+", "-"):
            self.take()
            right = self.term()
            value = value + right if token[1] == "+" else value - right
        return value

    def term(self):
        value = self.signed()
        while (token := self.peek()) is not None:
            if token[1] in _TIMES or token[1] == "*":
                self.take()
                value = value * self.signed()
            elif token[1] == "/":
                self.take()
                divisor = self.signed()
                if divisor == 0:
                    raise _GiveUp
                value = value / divisor
            elif token[0] in ("letter", "command") or token[1] in ("(", "{"):
                if token[0] == "number":
                    raise _GiveUp
                value = value * self.power()
            elif token[0] == "number":
                raise _GiveUp  # "2 3" is not a product anyone means
            else:
                break
        return value

    def signed(self):
        token = self.peek()
        if token is not None and token[1] in ("-", "+"):
            self.take()
            value = self.signed()
            return -value if token[1] == "-" else value
        return self.power()

    def power(self):
        base = self.atom()
        token = self.peek()
        if token is not None and token[1] == "^":
            self.take()
            exponent = self.exponent()
            if base == 0 and exponent.is_negative:
                raise _GiveUp
            return base**exponent
        return base

    def exponent(self):
        token = self.take()
        if token[1] == "{":
            value = self.expression()
            self.expect("}")
            return value
        if token[0] == "number":
            if len(token[1]) != 1:
                raise _GiveUp  # x^23 is x^2 * 3 in TeX; leave that to the grammar
            return sympy.Integer(token[1])
        if token[0] == "letter":
            return self.letter(token[1])
        raise _GiveUp

    def group(self):
        """A braced group, or a single digit or letter (\\frac12)."""
        token = self.take()
        if token[1] == "{":
            value = self.expression()
            self.expect("}")
            return value
        if token[0] == "number" and len(token[1]) == 1:
            return sympy.Integer(token[1])
        if token[0] == "letter":
            return self.letter(token[1])
        raise _GiveUp

    def letter(self, name: str):
        if name == "e":
            return sympy.E
        if name == "i" and self.imaginary_unit:
            return sympy.I
        return sympy.Symbol(name)

    def atom(self):
        kind, value = self.take()
        if kind == "number":
            if "." in value:
                return sympy.Float(value, max(15, len(value)))
            return sympy.Integer(value)
        if kind == "letter":
            following = self.peek()
            if value in _FUNCTION_LETTERS and following is not None and following[1] == "(":
                raise _GiveUp  # f(x) is a function
            return self.letter(value)
        if value in _FRACTIONS:
            numerator, denominator = self.group(), self.group()
            if denominator == 0:
                raise _GiveUp
            return numerator / denominator
        if value == "\\sqrt":
            index = None
            if (token := self.peek()) is not None and token[1] == "[":
                self.take()
                index = self.expression()
                self.expect("]")
            radicand = self.group()
            return sympy.sqrt(radicand) if index is None else sympy.root(radicand, index)
        if value == "\\pi":
            return sympy.pi
        if value in ("(", "{"):
            inner = self.expression()
            self.expect(")" if value == "(" else "}")
            return inner
        raise _GiveUp


def fast_expression(text: str, *, imaginary_unit: bool = False):
    """The sympy value of `text` when it is plain arithmetic LaTeX, else None."""
    tokens = _tokens(text)
    if not tokens:
        return None
    parser = _Parser(tokens, imaginary_unit)
    try:
        value = parser.expression()
    except (_GiveUp, ZeroDivisionError, RecursionError, TypeError, ValueError):
        return None
    if parser.index != len(tokens) or value is sympy.nan or value.has(sympy.zoo, sympy.nan):
        return None
    return value
