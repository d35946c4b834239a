"""Flink's DDL: CREATE TABLE / VIEW / FUNCTION and DROP, parsed into ``statements`` dataclasses.

``DdlParser`` extends the dialect's ``FlinkParser`` with the DDL grammar Flink documents:

    CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name
      [( { column | WATERMARK FOR c AS expr | [CONSTRAINT n] PRIMARY KEY (a, ..) NOT ENFORCED }
         [, ...] )]
      [COMMENT 'text'] [PARTITIONED BY (a, ..)] [WITH ('k' = 'v', ..)]
      [LIKE source [( {INCLUDING|EXCLUDING|OVERWRITING} {ALL|OPTIONS|..} [, ..] )]]
    column := name type [NOT NULL|NULL] [[CONSTRAINT n] PRIMARY KEY NOT ENFORCED] [COMMENT 'c']
            | name type [NOT NULL] METADATA [FROM 'key'] [VIRTUAL] [COMMENT 'c']
            | name AS expr [COMMENT 'c']
    CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(c, ..)] [COMMENT 'text'] AS query
    CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS] name AS 'path' [LANGUAGE JAVA|SCALA|PYTHON]
    DROP [TEMPORARY [SYSTEM]] {TABLE|VIEW|FUNCTION} [IF EXISTS] name
    DROP {DATABASE|CATALOG} [IF EXISTS] name [RESTRICT|CASCADE]

A type is kept as its text (``dialect.FlinkParser._parse_flink_type``); primary-key columns
are NOT NULL, as Flink makes them. ``PRIMARY KEY`` without ``NOT ENFORCED`` is refused with
Flink's reason (flintlock, like Flink, does not own the data to enforce it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from sqlglot import exp
from sqlglot.tokens import TokenType  # type: ignore[attr-defined]

from flintlock.table.errors import UnsupportedFeatureError, ValidationError
from flintlock.table.sql.dialect import FlinkParser, type_text
from flintlock.table.sql.statements import (
    ColumnSpec,
    CreateFunctionStatement,
    CreateTableStatement,
    CreateViewStatement,
    DropStatement,
    LikeSpec,
    WatermarkSpec,
)

if TYPE_CHECKING:
    from flintlock.table.sql.statements import Statement

ENFORCED_MESSAGE = (
    "Flink doesn't support ENFORCED mode for PRIMARY KEY constraint. ENFORCED/NOT ENFORCED "
    "controls if the constraint checks are performed on the incoming/outgoing data. Flink does "
    "not own the data therefore the only supported mode is the NOT ENFORCED mode"
)
_COLUMN_STOP_WORDS = frozenset({"NOT", "NULL", "METADATA", "PRIMARY", "CONSTRAINT", "COMMENT"})
_LIKE_ACTIONS = frozenset({"INCLUDING", "EXCLUDING", "OVERWRITING"})
_LIKE_TARGETS = frozenset({
    "ALL", "CONSTRAINTS", "PARTITIONS", "GENERATED", "OPTIONS", "WATERMARKS", "METADATA",
    "DISTRIBUTION",
})
_LANGUAGES = frozenset({"JAVA", "SCALA", "PYTHON"})


class _TableParts:
    """What the element list of one CREATE TABLE has collected so far."""

    def __init__(self) -> None:
        self.columns: list[ColumnSpec] = []
        self.watermark: WatermarkSpec | None = None
        self.primary_key: tuple[str, ...] | None = None
        self.primary_key_name: str | None = None


class DdlParser(FlinkParser):
    """The CREATE and DROP statements; names and small pieces the other statements share."""

    # -- names --------------------------------------------------------------------------------

    def _parse_name_part(self) -> str:
        token = self._curr
        if token and (
            token.token_type in (TokenType.IDENTIFIER, TokenType.VAR)
            or token.token_type in self.ID_VAR_TOKENS
        ):
            self._advance()
            return token.text
        self.raise_error("Was expecting an identifier")
        raise AssertionError("unreachable")

    def _parse_name(self) -> tuple[str, ...]:
        parts = [self._parse_name_part()]
        while self._match(TokenType.DOT):
            parts.append(self._parse_name_part())
        return tuple(parts)

    def _parse_string_value(self, what: str = "a quoted string") -> str:
        if not self._match(TokenType.STRING):
            self.raise_error(f"Was expecting {what}")
        return self._prev.text

    def _parse_if_not_exists(self) -> bool:
        return self._match_phrase("IF", "NOT", "EXISTS")

    # -- CREATE -------------------------------------------------------------------------------

    def _parse_create_statement(self) -> Statement:
        temporary = self._match(TokenType.TEMPORARY)
        system = temporary and self._match_phrase("SYSTEM")
        if self._match(TokenType.TABLE):
            if system:
                self.raise_error('Was expecting "FUNCTION" after TEMPORARY SYSTEM', self._prev)
            return self._parse_create_table(temporary)
        if self._match(TokenType.VIEW):
            if system:
                self.raise_error('Was expecting "FUNCTION" after TEMPORARY SYSTEM', self._prev)
            return self._parse_create_view(temporary)
        if self._match(TokenType.FUNCTION):
            return self._parse_create_function(temporary, system)
        word = self._curr.text.upper() if self._curr else ""
        if word in ("CATALOG", "DATABASE", "MATERIALIZED", "OR", "MODEL"):
            raise UnsupportedFeatureError(f"CREATE {word}")
        self.raise_error('Was expecting "TABLE", "VIEW" or "FUNCTION"')
        raise AssertionError("unreachable")

    def _parse_create_table(self, temporary: bool) -> CreateTableStatement:
        if_not_exists = self._parse_if_not_exists()
        name = self._parse_name()
        parts = _TableParts()
        if self._match(TokenType.L_PAREN):
            self._parse_table_element(parts)
            while self._match(TokenType.COMMA):
                self._parse_table_element(parts)
            self._expect(TokenType.R_PAREN, ")")
        comment = self._parse_string_value() if self._match(TokenType.COMMENT) else None
        if self._match_phrase("DISTRIBUTED"):
            raise UnsupportedFeatureError("DISTRIBUTED BY")
        partition_keys: tuple[str, ...] = ()
        if self._match_phrase("PARTITIONED", "BY"):
            partition_keys = self._parse_wrapped_names()
        options = self._parse_options() if self._match(TokenType.WITH) else ()
        like = self._parse_like() if self._match(TokenType.LIKE) else None
        if self._match(TokenType.ALIAS):
            raise UnsupportedFeatureError("CREATE TABLE ... AS SELECT")
        return CreateTableStatement(
            name=name, columns=tuple(parts.columns), watermark=parts.watermark,
            primary_key=parts.primary_key, partition_keys=partition_keys, options=options,
            temporary=temporary, if_not_exists=if_not_exists, comment=comment, like=like,
            primary_key_name=parts.primary_key_name,
        )

    def _parse_table_element(self, parts: _TableParts) -> None:
        if self._match_phrase("WATERMARK"):
            if parts.watermark is not None:
                self.raise_error("Multiple WATERMARK statements are not supported", self._prev)
            self._expect(TokenType.FOR, "FOR")
            rowtime = ".".join(self._parse_name())
            self._expect(TokenType.ALIAS, "AS")
            parts.watermark = WatermarkSpec(rowtime, self._parse_required_expression())
            return
        constraint_token = self._curr
        constraint = self._parse_constraint_name()
        if self._match_phrase("PRIMARY", "KEY"):
            self._set_primary_key(parts, self._parse_wrapped_names(), constraint, constraint_token)
            return
        if constraint is not None:
            self.raise_error('Was expecting "PRIMARY KEY"')
        if self._match_phrase("UNIQUE"):
            raise UnsupportedFeatureError("UNIQUE constraints")
        column = self._parse_column_spec(parts)
        parts.columns.append(column)

    def _parse_constraint_name(self) -> str | None:
        if self._match(TokenType.CONSTRAINT):
            return self._parse_name_part()
        return None

    def _set_primary_key(
        self, parts: _TableParts, columns: tuple[str, ...], name: str | None, token: object
    ) -> None:
        if not self._match_phrase("NOT", "ENFORCED"):
            raise ValidationError(ENFORCED_MESSAGE)
        if parts.primary_key is not None:
            self.raise_error("Duplicate primary key definition", self._prev)
        parts.primary_key = columns
        parts.primary_key_name = name
        keyed = set(columns)
        parts.columns = [
            _not_null(column) if column.name in keyed else column for column in parts.columns
        ]

    def _parse_column_spec(self, parts: _TableParts) -> ColumnSpec:
        name = self._parse_name_part()
        if self._match(TokenType.ALIAS):
            expression = self._parse_required_expression()
            comment = self._parse_string_value() if self._match(TokenType.COMMENT) else None
            return ColumnSpec(name, expression=expression, comment=comment)
        text = type_text(self._parse_flink_type(stop_words=_COLUMN_STOP_WORDS))
        nullable = True
        if self._match_phrase("NOT", "NULL"):
            nullable = False
        else:
            self._match(TokenType.NULL)
        metadata_key = None
        virtual = False
        if self._match_phrase("METADATA"):
            metadata_key = self._parse_string_value() if self._match(TokenType.FROM) else name
            virtual = self._match_phrase("VIRTUAL")
        constraint_token = self._curr
        constraint = self._parse_constraint_name()
        if self._match_phrase("PRIMARY", "KEY"):
            self._set_primary_key(parts, (name,), constraint, constraint_token)
            nullable = False
        elif constraint is not None:
            self.raise_error('Was expecting "PRIMARY KEY"')
        comment = self._parse_string_value() if self._match(TokenType.COMMENT) else None
        if parts.primary_key is not None and name in parts.primary_key:
            nullable = False
        return ColumnSpec(name, text, None, metadata_key, virtual, comment, nullable)

    def _parse_required_expression(self) -> exp.Expression:
        expression = self._parse_disjunction()
        if not isinstance(expression, exp.Expression):
            self.raise_error("Was expecting an expression")
        return cast(exp.Expression, expression)

    def _parse_wrapped_names(self) -> tuple[str, ...]:
        self._expect(TokenType.L_PAREN, "(")
        names = [".".join(self._parse_name())]
        while self._match(TokenType.COMMA):
            names.append(".".join(self._parse_name()))
        self._expect(TokenType.R_PAREN, ")")
        return tuple(names)

    def _parse_options(self) -> tuple[tuple[str, str], ...]:
        self._expect(TokenType.L_PAREN, "(")
        options: list[tuple[str, str]] = []
        if self._match(TokenType.R_PAREN):
            return ()
        while True:
            key = self._parse_string_value("a quoted option key")
            self._expect(TokenType.EQ, "=")
            options.append((key, self._parse_string_value("a quoted option value")))
            if not self._match(TokenType.COMMA):
                break
        self._expect(TokenType.R_PAREN, ")")
        return tuple(options)

    def _parse_like(self) -> LikeSpec:
        source = self._parse_name()
        options: list[tuple[str, str]] = []
        if self._match(TokenType.L_PAREN):
            while True:
                action, target = self._curr.text.upper(), self._next.text.upper()
                if action not in _LIKE_ACTIONS:
                    self.raise_error('Was expecting "INCLUDING", "EXCLUDING" or "OVERWRITING"')
                self._advance()
                if target not in _LIKE_TARGETS:
                    self.raise_error(
                        "Was expecting ALL, CONSTRAINTS, PARTITIONS, GENERATED, OPTIONS, "
                        "WATERMARKS, METADATA or DISTRIBUTION"
                    )
                self._advance()
                options.append((action, target))
                if not self._match(TokenType.COMMA):
                    break
            self._expect(TokenType.R_PAREN, ")")
        return LikeSpec(source, tuple(options))

    def _parse_create_view(self, temporary: bool) -> CreateViewStatement:
        if_not_exists = self._parse_if_not_exists()
        name = self._parse_name()
        columns = None
        if self._match(TokenType.L_PAREN):
            columns = tuple(self._parse_csv(self._parse_name_part))
            self._expect(TokenType.R_PAREN, ")")
        comment = self._parse_string_value() if self._match(TokenType.COMMENT) else None
        self._expect(TokenType.ALIAS, "AS")
        query = self._parse_query()
        return CreateViewStatement(name, query, columns, temporary, if_not_exists, comment)

    def _parse_create_function(self, temporary: bool, system: bool) -> CreateFunctionStatement:
        if_not_exists = self._parse_if_not_exists()
        name = self._parse_name()
        self._expect(TokenType.ALIAS, "AS")
        class_path = self._parse_string_value("the function's class as a quoted string")
        language = "JAVA"
        if self._match_phrase("LANGUAGE"):
            language = self._curr.text.upper() if self._curr else ""
            if language not in _LANGUAGES:
                self.raise_error('Was expecting "JAVA", "SCALA" or "PYTHON"')
            self._advance()
        if self._match(TokenType.USING):
            raise UnsupportedFeatureError("CREATE FUNCTION ... USING JAR")
        return CreateFunctionStatement(
            name, class_path, language, temporary, system, if_not_exists  # type: ignore[arg-type]
        )

    # -- DROP ---------------------------------------------------------------------------------

    def _parse_drop_statement(self) -> DropStatement:
        temporary = self._match(TokenType.TEMPORARY)
        system = temporary and self._match_phrase("SYSTEM")
        kind = self._curr.text.upper() if self._curr else ""
        allowed = ("FUNCTION",) if system else (
            ("TABLE", "VIEW", "FUNCTION") if temporary
            else ("TABLE", "VIEW", "FUNCTION", "DATABASE", "CATALOG")
        )
        if kind not in allowed:
            self.raise_error("Was expecting one of: " + ", ".join(f'"{k}"' for k in allowed))
        self._advance()
        if_exists = self._match_phrase("IF", "EXISTS")
        name = self._parse_name()
        if kind == "DATABASE" and self._match_texts(("RESTRICT", "CASCADE")):
            if self._prev.text.upper() == "CASCADE":
                raise UnsupportedFeatureError("DROP DATABASE ... CASCADE")
        return DropStatement(kind, name, temporary, system, if_exists)  # type: ignore[arg-type]

    # -- provided by the statement layer ------------------------------------------------------

    def _parse_query(self) -> exp.Query:
        raise NotImplementedError


def _not_null(column: ColumnSpec) -> ColumnSpec:
    return ColumnSpec(column.name, column.type_text, column.expression, column.metadata_key,
                      column.virtual, column.comment, False)
