"""Parses a SQL type as written in DDL, CAST or ``Schema.column("a", "DECIMAL(10, 2)")``.

Spellings (keywords case-insensitive), as Flink's type parser accepts them:

* ``TINYINT SMALLINT INT INTEGER BIGINT FLOAT DOUBLE [PRECISION] BOOLEAN DATE NULL``
* ``STRING``, ``VARCHAR`` (= STRING), ``VARCHAR(n)``, ``CHARACTER VARYING(n)``, ``CHAR``
  (= CHAR(1)), ``CHAR(n)``, ``CHARACTER(n)``; ``BYTES``, ``VARBINARY`` (= BYTES),
  ``VARBINARY(n)``, ``BINARY`` (= BINARY(1)), ``BINARY(n)``
* ``DECIMAL`` / ``DEC`` / ``NUMERIC`` ``[(p [, s])]`` (default (10, 0))
* ``TIME[(p)] [WITHOUT TIME ZONE]`` (default 0), ``TIMESTAMP[(p)] [WITHOUT TIME ZONE]``
  (default 6), ``TIMESTAMP[(p)] WITH LOCAL TIME ZONE`` = ``TIMESTAMP_LTZ[(p)]``,
  ``TIMESTAMP[(p)] WITH TIME ZONE``
* ``INTERVAL YEAR[(p)] [TO MONTH]``, ``INTERVAL MONTH``, ``INTERVAL DAY[(p)] [TO HOUR |
  MINUTE | SECOND[(f)]]``, ``INTERVAL HOUR [TO MINUTE | SECOND[(f)]]``, ``INTERVAL MINUTE
  [TO SECOND[(f)]]``, ``INTERVAL SECOND[(f)]``
* ``ARRAY<t>``, ``t ARRAY``, ``MULTISET<t>``, ``t MULTISET``, ``MAP<k, v>``,
  ``ROW<name t ['description'], ...>`` and ``ROW(name t, ...)`` with plain or
  backtick-quoted names (a doubled backtick is one backtick)
* any type followed by ``NOT NULL`` or ``NULL``.

``REAL`` parses in Flink but is refused when used ("Type is not supported: REAL"); it is
refused here with the same words. Anything else raises ``DataTypeParseError`` naming the
position (0-based character offset) and what was expected.

Pure functions; no state.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from flintlock.table.composite_types import (
    ArrayType,
    DataTypes,
    MapType,
    MultisetType,
    RowField,
    RowType,
)
from flintlock.table.data_type import (
    MAX_LENGTH,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    NullType,
    Resolution,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    ZonedTimestampType,
)
from flintlock.table.errors import ValidationError


class DataTypeParseError(ValidationError, ValueError):
    """A type string that is not a valid Flink SQL type."""

    def __init__(self, text: str, position: int, reason: str) -> None:
        super().__init__(text, position, reason)
        self.text = text
        self.position = position
        self.reason = reason

    def __str__(self) -> str:
        return f"Could not parse type {self.text!r} at position {self.position}: {self.reason}"


_TOKEN = re.compile(r"""
    \s*(?:
      (?P<quoted>`(?:[^`]|``)*`)
    | (?P<string>'(?:[^']|'')*')
    | (?P<number>\d+)
    | (?P<word>[A-Za-z_][A-Za-z0-9_$]*)
    | (?P<symbol>[<>(),])
    )""", re.VERBOSE)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    position: int


def _tokenize(text: str) -> list[_Token]:
    tokens, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.lastgroup is None:
            start = len(text) - len(text[position:].lstrip())
            raise DataTypeParseError(text, start, f"unexpected character {text[start]!r}")
        kind = match.lastgroup
        tokens.append(_Token(kind, match.group(kind), match.start(kind)))
        position = match.end()
    return tokens


_SIMPLE: dict[str, Callable[[], DataType]] = {
    "TINYINT": TinyIntType, "SMALLINT": SmallIntType, "INT": IntType, "INTEGER": IntType,
    "BIGINT": BigIntType, "FLOAT": FloatType, "BOOLEAN": BooleanType, "DATE": DateType,
    "STRING": lambda: VarCharType(MAX_LENGTH), "BYTES": lambda: VarBinaryType(MAX_LENGTH),
}
_INTERVAL_UNITS = {"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.index = 0

    # -- token helpers ------------------------------------------------------------------------

    def _peek(self, offset: int = 0) -> _Token | None:
        at = self.index + offset
        return self.tokens[at] if at < len(self.tokens) else None

    def _fail(self, reason: str) -> DataTypeParseError:
        token = self._peek()
        position = token.position if token is not None else len(self.text)
        return DataTypeParseError(self.text, position, reason)

    def _at_word(self, *words: str, offset: int = 0) -> bool:
        token = self._peek(offset)
        return token is not None and token.kind == "word" and token.text.upper() in words

    def _accept_word(self, *words: str) -> bool:
        if self._at_word(*words):
            self.index += 1
            return True
        return False

    def _expect_word(self, word: str) -> None:
        if not self._accept_word(word):
            raise self._fail(f"expected {word}")

    def _accept_symbol(self, symbol: str) -> bool:
        token = self._peek()
        if token is not None and token.kind == "symbol" and token.text == symbol:
            self.index += 1
            return True
        return False

    def _expect_symbol(self, symbol: str) -> None:
        if not self._accept_symbol(symbol):
            raise self._fail(f"expected '{symbol}'")

    def _number(self) -> int:
        token = self._peek()
        if token is None or token.kind != "number":
            raise self._fail("expected a number")
        self.index += 1
        return int(token.text)

    def _optional_numbers(self, most: int) -> list[int]:
        if not self._accept_symbol("("):
            return []
        numbers = [self._number()]
        while len(numbers) < most and self._accept_symbol(","):
            numbers.append(self._number())
        self._expect_symbol(")")
        return numbers

    # -- grammar ------------------------------------------------------------------------------

    def parse(self) -> DataType:
        data_type = self.data_type()
        if self._peek() is not None:
            raise self._fail("unexpected text after the type")
        return data_type

    def data_type(self) -> DataType:
        data_type = self._base()
        while True:
            if self._accept_word("ARRAY"):
                data_type = ArrayType(data_type)
            elif self._accept_word("MULTISET"):
                data_type = MultisetType(data_type)
            elif self._at_word("NOT") and self._at_word("NULL", offset=1):
                self.index += 2
                data_type = data_type.not_null()
            elif self._accept_word("NULL"):
                data_type = data_type.nullable()
            else:
                return data_type

    def _base(self) -> DataType:
        token = self._peek()
        if token is None:
            raise self._fail("expected a type")
        if token.kind != "word":
            raise self._fail(f"expected a type, found {token.text!r}")
        word = token.text.upper()
        self.index += 1
        simple = _SIMPLE.get(word)
        if simple is not None:
            made: DataType = simple()
            return made
        method = getattr(self, f"_type_{word}", None)
        if method is None:
            self.index -= 1
            raise self._fail(f"unknown type {token.text!r}")
        result: DataType = method()
        return result

    def _type_NULL(self) -> DataType:
        return NullType()

    def _type_REAL(self) -> DataType:
        self.index -= 1
        raise self._fail("Type is not supported: REAL")

    def _type_DOUBLE(self) -> DataType:
        self._accept_word("PRECISION")
        return DoubleType()

    def _sized(self, kind: Callable[[int], DataType], default: int | None,
               limit: int = MAX_LENGTH) -> DataType:
        numbers = self._optional_numbers(1)
        length = numbers[0] if numbers else (default if default is not None else limit)
        if not 1 <= length <= limit:
            raise self._fail(f"length must be between 1 and {limit}, got {length}")
        return kind(length)

    def _type_CHAR(self) -> DataType:
        return self._sized(CharType, 1)

    def _type_CHARACTER(self) -> DataType:
        if self._accept_word("VARYING"):
            return self._sized(VarCharType, None)
        return self._sized(CharType, 1)

    def _type_VARCHAR(self) -> DataType:
        return self._sized(VarCharType, None)

    def _type_BINARY(self) -> DataType:
        return self._sized(BinaryType, 1)

    def _type_VARBINARY(self) -> DataType:
        return self._sized(VarBinaryType, None)

    def _type_DECIMAL(self) -> DataType:
        numbers = self._optional_numbers(2)
        precision = numbers[0] if numbers else 10
        scale = numbers[1] if len(numbers) > 1 else 0
        if not 1 <= precision <= 38 or not 0 <= scale <= precision:
            raise self._fail(f"DECIMAL({precision}, {scale}) is out of range: precision 1..38, "
                             "scale 0..precision")
        return DecimalType(precision, scale)

    _type_DEC = _type_NUMERIC = _type_DECIMAL

    def _precision(self, default: int) -> int:
        numbers = self._optional_numbers(1)
        precision = numbers[0] if numbers else default
        if not 0 <= precision <= 9:
            raise self._fail(f"precision must be between 0 and 9, got {precision}")
        return precision

    def _time_zone(self) -> str:
        """'' (none said), 'WITHOUT', 'LOCAL' or 'WITH' after a TIME or TIMESTAMP."""
        if self._accept_word("WITHOUT"):
            self._expect_word("TIME")
            self._expect_word("ZONE")
            return "WITHOUT"
        if self._accept_word("WITH"):
            local = self._accept_word("LOCAL")
            self._expect_word("TIME")
            self._expect_word("ZONE")
            return "LOCAL" if local else "WITH"
        return ""

    def _type_TIME(self) -> DataType:
        precision = self._precision(0)
        if self._time_zone() not in ("", "WITHOUT"):
            raise self._fail("TIME WITH TIME ZONE is not a Flink type")
        return TimeType(precision)

    def _type_TIMESTAMP(self) -> DataType:
        precision = self._precision(6)
        zone = self._time_zone()
        if zone == "LOCAL":
            return LocalZonedTimestampType(precision)
        if zone == "WITH":
            return ZonedTimestampType(precision)
        return TimestampType(precision)

    def _type_TIMESTAMP_LTZ(self) -> DataType:
        return LocalZonedTimestampType(self._precision(6))

    def _element(self) -> DataType:
        self._expect_symbol("<")
        element = self.data_type()
        self._expect_symbol(">")
        return element

    def _type_ARRAY(self) -> DataType:
        return ArrayType(self._element())

    def _type_MULTISET(self) -> DataType:
        return MultisetType(self._element())

    def _type_MAP(self) -> DataType:
        self._expect_symbol("<")
        key = self.data_type()
        self._expect_symbol(",")
        value = self.data_type()
        self._expect_symbol(">")
        return MapType(key, value)

    def _type_ROW(self) -> DataType:
        closing = ">" if self._accept_symbol("<") else ")"
        if closing == ")":
            self._expect_symbol("(")
        fields: list[RowField] = []
        if not self._accept_symbol(closing):
            fields.append(self._field())
            while self._accept_symbol(","):
                fields.append(self._field())
            self._expect_symbol(closing)
        return RowType(fields)

    def _field(self) -> RowField:
        token = self._peek()
        if token is None or token.kind not in ("word", "quoted"):
            raise self._fail("expected a field name")
        self.index += 1
        name = token.text[1:-1].replace("``", "`") if token.kind == "quoted" else token.text
        data_type = self.data_type()
        description = None
        after = self._peek()
        if after is not None and after.kind == "string":
            self.index += 1
            description = after.text[1:-1].replace("''", "'")
        return RowField(name, data_type, description)

    def _type_INTERVAL(self) -> DataType:
        upper = self._resolution()
        lower = self._resolution() if self._accept_word("TO") else None
        try:
            return DataTypes.INTERVAL(upper, lower)
        except ValueError as error:
            raise self._fail(str(error)) from None

    def _resolution(self) -> Resolution:
        token = self._peek()
        if token is None or token.kind != "word" or token.text.upper() not in _INTERVAL_UNITS:
            raise self._fail("expected an interval unit (YEAR, MONTH, DAY, HOUR, MINUTE, SECOND)")
        self.index += 1
        unit = token.text.upper()
        numbers = self._optional_numbers(1)
        factory = getattr(DataTypes, unit)
        if unit in ("YEAR", "DAY", "SECOND") and numbers:
            return factory(numbers[0])  # type: ignore[no-any-return]
        if numbers:
            raise self._fail(f"{unit} takes no precision")
        return factory()  # type: ignore[no-any-return]


def parse_data_type(text: str) -> DataType:
    """The ``DataType`` a SQL type string denotes (module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"a type string is needed, got {text!r}")
    return _Parser(text).parse()
