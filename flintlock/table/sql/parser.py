"""Flink SQL text to statements: ``parse_statements``, ``parse_statement``, ``parse_expression``.

The script is tokenized once with the Flink dialect's tokenizer; ``StatementParser`` (a
``FlinkParser`` that also knows Flink's statements) walks the tokens statement by statement,
separated by ``;``. DDL and commands become the dataclasses of ``statements.py``; queries and
expressions are parsed by the dialect's parser and stay sqlglot trees.

A statement set spans semicolons: ``EXECUTE STATEMENT SET BEGIN INSERT ..; INSERT ..; END``
and the SQL client's ``BEGIN STATEMENT SET; INSERT ..; ..; END;`` both give one
``StatementSetStatement`` (a script that opens a set and never ends it fails at its end).

Every syntax error is a ``SqlParseError`` in Flink's words: ``SQL parse failed. Encountered
"FORM" at line 1, column 10.`` and on the next line what was expected; ``line``, ``column``
(1-based, of the token's first character) and ``token`` (its text, ``<EOF>`` at the end) are
attributes. A statement Flink has that flintlock does not parse yet (ALTER, ANALYZE, CREATE
CATALOG, MATCH_RECOGNIZE, ...) raises ``UnsupportedFeatureError`` naming it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType  # type: ignore[attr-defined]

from flintlock.table.errors import SqlParseError, UnsupportedFeatureError
from flintlock.table.sql import ddl
from flintlock.table.sql.dialect import FLINK, TokenParseError
from flintlock.table.sql.statements import (
    DescribeStatement,
    ExplainStatement,
    InsertStatement,
    QueryStatement,
    ResetStatement,
    SetStatement,
    ShowStatement,
    Statement,
    StatementSetStatement,
    UseStatement,
)

_QUERY_START = (TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.L_PAREN)
_EXPLAIN_DETAILS = frozenset(
    {"ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE"}
)
_UNSUPPORTED_STATEMENTS = frozenset({
    "ALTER", "ANALYZE", "LOAD", "UNLOAD", "ADD", "REMOVE", "TRUNCATE", "DELETE", "UPDATE",
    "CALL", "COMPILE", "STOP", "REPLACE",
})
_SHOW_SIMPLE = (
    ("USER", "FUNCTIONS"), ("CURRENT", "CATALOG"), ("CURRENT", "DATABASE"),
    ("FULL", "MODULES"), ("TABLES",), ("VIEWS",), ("FUNCTIONS",), ("CATALOGS",),
    ("DATABASES",), ("MODULES",), ("JOBS",), ("JARS",),
)


class StatementParser(ddl.DdlParser):
    """Flink's statements on top of the dialect's query parser. One instance per script."""

    def parse_script(self, tokens: list[Token], sql: str) -> list[Statement]:
        self.reset()
        self.sql = sql
        self._tokens = tokens
        self._tokens_size = len(tokens)
        self._index = -1
        self._advance()
        statements: list[Statement] = []
        while self._curr:
            if self._match(TokenType.SEMICOLON):
                continue
            statements.append(self._parse_one())
            if self._curr and not self._match(TokenType.SEMICOLON):
                self.raise_error('Was expecting ";" or the end of the statement')
        return statements

    def parse_lone_expression(self, tokens: list[Token], sql: str) -> exp.Expression:
        self.reset()
        self.sql = sql
        self._tokens = tokens
        self._tokens_size = len(tokens)
        self._index = -1
        self._advance()
        expression = self._parse_required_expression()
        if self._curr:
            self.raise_error("Was expecting the end of the expression")
        return expression

    # -- dispatch -----------------------------------------------------------------------------

    def _parse_one(self) -> Statement:
        token = self._curr
        word = token.text.upper() if token.token_type is not TokenType.IDENTIFIER else ""
        handler = self._handlers().get(word)
        if handler is not None:
            self._advance()
            return handler()
        if token.token_type in _QUERY_START:
            return QueryStatement(self._parse_query())
        if word in _UNSUPPORTED_STATEMENTS:
            raise UnsupportedFeatureError(f"the {word} statement")
        self.raise_error(
            "Was expecting a statement: SELECT, INSERT, CREATE, DROP, SET, RESET, SHOW, "
            "DESCRIBE, EXPLAIN, USE, EXECUTE or BEGIN STATEMENT SET"
        )
        raise AssertionError("unreachable")

    def _handlers(self) -> dict[str, Callable[[], Statement]]:
        return {
            "CREATE": self._parse_create_statement,
            "DROP": self._parse_drop_statement,
            "INSERT": self._parse_insert_statement,
            "EXECUTE": self._parse_execute,
            "BEGIN": self._parse_begin,
            "SET": self._parse_set_statement,
            "RESET": self._parse_reset,
            "SHOW": self._parse_show_statement,
            "DESCRIBE": self._parse_describe_statement,
            "DESC": self._parse_describe_statement,
            "EXPLAIN": self._parse_explain,
            "USE": self._parse_use_statement,
        }

    # -- queries and inserts ------------------------------------------------------------------

    def _parse_query(self) -> exp.Query:
        if self._curr.token_type not in _QUERY_START:
            self.raise_error("Was expecting a query: SELECT, WITH, VALUES or (query)")
        start = self._curr
        if self._curr.token_type is TokenType.VALUES:
            values = self._parse_derived_table_values()
            query: exp.Expr | None = self.expression(
                exp.Select(expressions=[exp.Star()], from_=exp.From(this=values))
            )
        else:
            query = self._parse_select(nested=True)
        if query is not None:
            query = self._parse_set_operations(query)
            query = self._parse_query_modifiers(query)
        if isinstance(query, exp.Subquery) and not query.alias:
            query = query.unnest()
        if not isinstance(query, exp.Query):
            self.raise_error("Was expecting a query", start)
        return cast(exp.Query, query)

    def _parse_insert_statement(self) -> InsertStatement:
        if self._match(TokenType.OVERWRITE):
            overwrite = True
        else:
            overwrite = False
            self._expect(TokenType.INTO, "INTO")
        target = self._parse_name()
        partition: tuple[tuple[str, exp.Expression], ...] = ()
        if self._match(TokenType.PARTITION):
            partition = self._parse_static_partition()
        columns = None
        if self._curr.token_type is TokenType.L_PAREN and self._next.token_type not in (
            TokenType.SELECT, TokenType.WITH, TokenType.VALUES, TokenType.L_PAREN,
        ):
            self._advance()
            columns = tuple(self._parse_csv(self._parse_name_part))
            self._expect(TokenType.R_PAREN, ")")
        return InsertStatement(target, self._parse_query(), columns, overwrite, partition)

    def _parse_static_partition(self) -> tuple[tuple[str, exp.Expression], ...]:
        self._expect(TokenType.L_PAREN, "(")
        pairs = []
        while True:
            name = self._parse_name_part()
            self._expect(TokenType.EQ, "=")
            value = self._parse_primary()
            if not isinstance(value, exp.Expression):
                self.raise_error("Was expecting a literal")
            pairs.append((name, cast(exp.Expression, value)))
            if not self._match(TokenType.COMMA):
                break
        self._expect(TokenType.R_PAREN, ")")
        return tuple(pairs)

    def _parse_execute(self) -> Statement:
        if self._match_phrase("STATEMENT", "SET"):
            self._expect(TokenType.BEGIN, "BEGIN")
            return self._parse_statement_set_body()
        if self._match(TokenType.INSERT):
            return self._parse_insert_statement()
        if self._curr.token_type in _QUERY_START:
            return QueryStatement(self._parse_query())
        self.raise_error('Was expecting "STATEMENT SET", "INSERT" or a query')
        raise AssertionError("unreachable")

    def _parse_begin(self) -> StatementSetStatement:
        if not self._match_phrase("STATEMENT", "SET"):
            self.raise_error('Was expecting "STATEMENT SET"')
        self._expect(TokenType.SEMICOLON, ";")
        return self._parse_statement_set_body()

    def _parse_statement_set_body(self) -> StatementSetStatement:
        inserts: list[InsertStatement] = []
        while True:
            while self._match(TokenType.SEMICOLON):
                pass
            if self._match(TokenType.END):
                return StatementSetStatement(tuple(inserts))
            if not self._match(TokenType.INSERT):
                self.raise_error('Was expecting "INSERT" or "END" in the statement set')
            inserts.append(self._parse_insert_statement())
            if self._curr.token_type is not TokenType.END:
                self._expect(TokenType.SEMICOLON, ";")

    # -- commands -----------------------------------------------------------------------------

    def _parse_set_statement(self) -> SetStatement:
        if not self._curr or self._curr.token_type is TokenType.SEMICOLON:
            return SetStatement()
        key = self._parse_option_text(stop=TokenType.EQ)
        self._expect(TokenType.EQ, "=")
        return SetStatement(key, self._parse_option_text(stop=TokenType.SEMICOLON))

    def _parse_reset(self) -> ResetStatement:
        if not self._curr or self._curr.token_type is TokenType.SEMICOLON:
            return ResetStatement()
        return ResetStatement(self._parse_option_text(stop=TokenType.SEMICOLON))

    def _parse_option_text(self, stop: TokenType) -> str:
        """A quoted string, or (as older Flink allowed) the raw text up to ``stop``."""
        if self._match(TokenType.STRING):
            return self._prev.text
        first = self._curr
        if not first or first.token_type is stop:
            self.raise_error("Was expecting a quoted string")
        last = first
        while self._curr and self._curr.token_type not in (stop, TokenType.SEMICOLON):
            last = self._curr
            self._advance()
        return self.sql[first.start : last.end + 1]

    def _parse_show_statement(self) -> ShowStatement:
        if self._match_phrase("CREATE", "TABLE"):
            return ShowStatement("CREATE TABLE", self._parse_name())
        if self._match_phrase("CREATE", "VIEW"):
            return ShowStatement("CREATE VIEW", self._parse_name())
        if self._match_phrase("COLUMNS"):
            self._match_set((TokenType.FROM, TokenType.IN))
            return self._with_like(ShowStatement("COLUMNS", self._parse_name()))
        for words in _SHOW_SIMPLE:
            if self._match_phrase(*words):
                kind = " ".join(words)
                name = None
                if kind in ("TABLES", "VIEWS", "FUNCTIONS", "USER FUNCTIONS") and (
                    self._match_set((TokenType.FROM, TokenType.IN))
                ):
                    name = self._parse_name()
                return self._with_like(ShowStatement(kind, name))  # type: ignore[arg-type]
        self.raise_error(
            "Was expecting one of: TABLES, VIEWS, FUNCTIONS, USER FUNCTIONS, CATALOGS, "
            "DATABASES, CURRENT CATALOG, CURRENT DATABASE, CREATE TABLE, CREATE VIEW, COLUMNS, "
            "MODULES, FULL MODULES, JOBS, JARS"
        )
        raise AssertionError("unreachable")

    def _with_like(self, show: ShowStatement) -> ShowStatement:
        not_like = self._match_phrase("NOT", "LIKE")
        if not_like or self._match_set((TokenType.LIKE, TokenType.ILIKE)):
            self._expect(TokenType.STRING, "a quoted LIKE pattern")
            return ShowStatement(show.kind, show.name, self._prev.text, not_like)
        return show

    def _parse_describe_statement(self) -> DescribeStatement:
        extended = self._match_phrase("EXTENDED")
        return DescribeStatement(self._parse_name(), extended)

    def _parse_explain(self) -> ExplainStatement:
        details: list[str] = []
        if self._match_phrase("PLAN", "FOR"):
            pass
        elif self._curr.text.upper() in _EXPLAIN_DETAILS:
            while True:
                if self._curr.text.upper() not in _EXPLAIN_DETAILS:
                    self.raise_error(
                        "Was expecting an explain detail: ESTIMATED_COST, CHANGELOG_MODE, "
                        "JSON_EXECUTION_PLAN or PLAN_ADVICE"
                    )
                details.append(self._curr.text.upper())
                self._advance()
                if not self._match(TokenType.COMMA):
                    break
        if self._match(TokenType.INSERT):
            statement: Statement = self._parse_insert_statement()
        elif self._match_phrase("STATEMENT", "SET"):
            self._expect(TokenType.BEGIN, "BEGIN")
            statement = self._parse_statement_set_body()
        elif self._match(TokenType.EXECUTE):
            statement = self._parse_execute()
        else:
            statement = QueryStatement(self._parse_query())
        return ExplainStatement(statement, tuple(details))

    def _parse_use_statement(self) -> UseStatement:
        if self._match_phrase("CATALOG"):
            return UseStatement(self._parse_name_part(), None)
        if self._match_phrase("MODULES"):
            raise UnsupportedFeatureError("USE MODULES")
        name = self._parse_name()
        if len(name) == 1:
            return UseStatement(None, name[0])
        if len(name) == 2:
            return UseStatement(name[0], name[1])
        self.raise_error("Was expecting [catalog.]database", self._prev)
        raise AssertionError("unreachable")


# -- entry points ---------------------------------------------------------------------------------


def _position(sql: str, offset: int) -> tuple[int, int]:
    line = sql.count("\n", 0, offset) + 1
    column = offset - (sql.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _detail(description: str) -> str:
    if description.startswith("Was expecting"):
        return description
    if description.startswith("Expecting "):
        return f'Was expecting "{description[len("Expecting "):].strip()}".'
    if description.startswith("Required keyword") or description.startswith("Expected"):
        return "Was expecting an expression."
    return description


def _syntax_error(error: TokenParseError, sql: str, tokens: list[Token]) -> SqlParseError:
    token = error.token
    if token is None:
        text = "<EOF>"
        offset = tokens[-1].end if tokens else 0
    else:
        text = sql[token.start : token.end + 1] or token.text
        offset = token.start
    line, column = _position(sql, offset)
    message = (f'SQL parse failed. Encountered "{text}" at line {line}, column {column}.\n'
               f"{_detail(error.description)}")
    return SqlParseError(message, line, column, text)


def _lexical_error(sql: str) -> SqlParseError:
    """The unterminated quote or comment that stopped the tokenizer."""
    index, opened = 0, None
    while index < len(sql):
        char = sql[index]
        if sql.startswith("--", index):
            end = sql.find("\n", index)
            index = len(sql) if end < 0 else end + 1
            continue
        closing = {"'": "'", "`": "`"}.get(char) or ("*/" if sql.startswith("/*", index) else None)
        if closing is None:
            index += 1
            continue
        end = sql.find(closing, index + (2 if closing == "*/" else 1))
        while closing != "*/" and end >= 0 and sql.startswith(closing * 2, end):
            end = sql.find(closing, end + 2)
        if end < 0:
            opened = index
            break
        index = end + len(closing)
    offset = opened if opened is not None else max(len(sql) - 1, 0)
    line, column = _position(sql, offset)
    text = sql[offset:offset + 2] if sql.startswith("/*", offset) else sql[offset:offset + 1]
    message = (f"SQL parse failed. Lexical error at line {line}, column {column}. "
               f'Encountered: <EOF> after : "{sql[offset:offset + 40]}"')
    return SqlParseError(message, line, column, text)


def _tokenize(sql: str) -> list[Token]:
    try:
        return FLINK.tokenize(sql)
    except TokenError as error:
        raise _lexical_error(sql) from error


def parse_statements(sql: str) -> list[Statement]:
    """Every statement of a ``;``-separated script, in order (empty statements skipped)."""
    tokens = _tokenize(sql)
    try:
        return StatementParser(dialect=FLINK).parse_script(tokens, sql)
    except TokenParseError as error:
        raise _syntax_error(error, sql, tokens) from None


def parse_statement(sql: str) -> Statement:
    """Exactly one statement (a trailing ``;`` allowed), as ``TableEnvironment.execute_sql``
    and ``sql_query`` take it."""
    statements = parse_statements(sql)
    if len(statements) != 1:
        raise SqlParseError(
            f"only single statement supported, got {len(statements)} statements", 1, 1, ""
        )
    return statements[0]


def parse_expression(sql: str) -> exp.Expression:
    """One SQL expression (``a + 1``, ``CAST(x AS INT)``, ``PROCTIME()``): Table API string
    expressions, ``Schema.column_by_expression`` and computed columns."""
    tokens = _tokenize(sql)
    try:
        return StatementParser(dialect=FLINK).parse_lone_expression(tokens, sql)
    except TokenParseError as error:
        raise _syntax_error(error, sql, tokens) from None
