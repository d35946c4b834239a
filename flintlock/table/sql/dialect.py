"""Flink SQL as a sqlglot dialect that flintlock owns: tokens, query and expression syntax.

``Flink`` is a ``sqlglot.dialects.Dialect`` subclass with its own tokenizer, parser and
generator. The statement layer (``parser.py``: DDL, INSERT, SET, SHOW, ...) drives
``FlinkParser`` and turns statements into flintlock's dataclasses; queries and expressions stay
sqlglot trees, and this docstring is the contract the binder codes against.

Tokens: identifiers are quoted with backticks and keep their case as written (Flink is
case-sensitive; nothing here upper- or lower-cases a name); string literals use single quotes,
``''`` escapes a quote and a backslash is an ordinary character; comments are ``--`` to the end
of the line and ``/* ... */``; ``/*+ ... */`` right after SELECT is a query hint.

What each construct becomes (``exp`` is ``sqlglot.exp``; ``nodes`` is flintlock.table.sql.nodes):

- ``SELECT ...``: ``exp.Select`` (``expressions``, ``from_``, ``joins``, ``where``, ``group``,
  ``having``, ``order``, ``limit``, ``offset``, ``distinct``, ``with_``, ``windows``, ``hint``);
  ``UNION [ALL]`` / ``INTERSECT`` / ``EXCEPT``: ``exp.Union`` / ``exp.Intersect`` /
  ``exp.Except`` (``distinct`` False for ALL); ``WITH x AS (...)``: the query's ``with_`` arg,
  an ``exp.With`` of ``exp.CTE``; ``VALUES (1, 'a'), ...``: ``exp.Values`` of ``exp.Tuple``
  (in FROM with its ``alias`` ``exp.TableAlias(this, columns)``; a statement or INSERT source
  that is VALUES is ``SELECT * FROM (VALUES ...)``: an ``exp.Select`` whose FROM is the
  Values, alias absent, or ``_values`` where sqlglot wraps one inside a set operation);
  ``(SELECT ...)`` in FROM: ``exp.Subquery``.
- Names: a column is ``exp.Column(this=Identifier, table=Identifier?)`` (``a.b.c`` is a
  Column with ``table`` and ``db`` or an ``exp.Dot`` chain for deeper paths); a table is
  ``exp.Table(this, db, catalog)`` of ``exp.Identifier`` (``quoted`` True for backticks),
  ``alias`` an ``exp.TableAlias``; ``*`` and ``t.*`` are ``exp.Star`` / Column of Star;
  ``AS name`` is ``exp.Alias``.
- Function calls: every call of the form ``name(args)`` is ``exp.Anonymous(this=name as
  written, expressions=args)``, built-ins and user functions alike (read the name with
  ``node.name``: ``this`` is an ``exp.Identifier`` when the name was backtick-quoted;
  ``COUNT(*)`` has an ``exp.Star`` argument, ``COUNT(DISTINCT a, b)`` one
  ``exp.Distinct(expressions=[a, b])``);
  a catalog path ``cat.db.f(x)`` is an ``exp.Dot`` whose right side is that Anonymous; the
  niladic keywords ``CURRENT_TIMESTAMP``, ``CURRENT_DATE``, ``CURRENT_TIME``, ``LOCALTIME``,
  ``LOCALTIMESTAMP``, ``CURRENT_ROW_TIMESTAMP``, ``CURRENT_USER`` (unquoted, without
  parentheses) are Anonymous with no arguments, the name upper-cased.
  ``name(args) OVER (PARTITION BY .. ORDER BY .. ROWS|RANGE BETWEEN ..)`` is
  ``exp.Window(this=call, partition_by, order, spec=exp.WindowSpec)``, ``OVER w`` a Window
  whose ``alias`` names the ``WINDOW w AS (...)`` clause; ``agg(x) FILTER (WHERE c)`` is
  ``exp.Filter(this=call, expression=exp.Where)``; ``f(name => value)`` arguments are
  ``exp.Kwarg(this=exp.Var(name), expression=value)``.
- Special call syntax keeps sqlglot's nodes: ``CAST(x AS t)`` ``exp.Cast(this, to)``,
  ``TRY_CAST`` ``exp.TryCast``; ``EXTRACT(HOUR FROM ts)`` ``exp.Extract(this=Var('HOUR'),
  expression=ts)``; ``POSITION(a IN b)`` ``exp.StrPosition(this=b, substr=a)``;
  ``TRIM([BOTH|LEADING|TRAILING] [c] FROM s)`` ``exp.Trim(this=s, expression=c,
  position='BOTH'|..)`` and ``TRIM(s)`` ``exp.Trim(this=s)``; ``SUBSTRING(s FROM i FOR n)``
  and ``SUBSTRING(s, i, n)`` ``exp.Substring(this=s, start=i, length=n)``;
  ``OVERLAY(s PLACING r FROM i [FOR n])`` ``exp.Overlay(this=s, expression=r, from_=i,
  for_=n)``; ``CEIL|CEILING|FLOOR(x [TO unit])`` ``exp.Ceil``/``exp.Floor`` (``to`` a Var);
  ``TIMESTAMPADD(DAY, 1, ts)`` / ``TIMESTAMPDIFF(HOUR, a, b)`` Anonymous whose first
  argument is ``exp.Var('DAY')``; ``JSON_VALUE(j, '$.a' [RETURNING t] [.. ON EMPTY]
  [.. ON ERROR])`` ``exp.JSONValue(this=j, path=Literal, returning=DataType,
  on_condition=exp.OnCondition(empty, error))`` (each ``'NULL ON EMPTY'``-style text or the
  DEFAULT expression).
- Types (CAST, TRY_CAST, RETURNING, DDL): always ``exp.DataType(this=DType.USERDEFINED,
  kind=<the type's text exactly as written>)``, e.g. ``kind='ROW<x INT, y STRING>'``;
  ``type_text(node)`` returns it and ``flintlock.table.types.from_sql_string`` reads it.
- Literals: numbers and strings ``exp.Literal`` (``is_string``), adjacent strings
  ``exp.Concat``; ``TRUE``/``FALSE`` ``exp.Boolean``; ``NULL`` ``exp.Null``;
  ``DATE|TIME|TIMESTAMP|TIMESTAMP_LTZ '...'`` ``nodes.TypedLiteral(this=Literal, to=DataType)``;
  ``INTERVAL '10' MINUTE`` ``exp.Interval(this=Literal.string('10'), unit=Var('MINUTE'))``
  (the unit as written, upper-cased: ``MINUTES`` stays ``MINUTES``), ``INTERVAL '1 10'
  DAY TO HOUR`` has ``unit=exp.IntervalSpan(this=Var, expression=Var)``;
  ``ARRAY[1, 2]`` ``exp.Array``; ``MAP['a', 1, 'b', 2]`` ``exp.VarMap(keys=exp.Array,
  values=exp.Array)``; ``ROW(a, b)`` Anonymous ``ROW``; ``arr[1]`` / ``m['k']``
  ``exp.Bracket`` (indices as written: Flink's are 1-based).
- Operators: ``exp.Add``/``Sub``/``Mul``/``Div``/``Mod``(``%``)/``Neg``, ``exp.EQ``/``NEQ``/
  ``GT``/``GTE``/``LT``/``LTE``, ``exp.And``/``Or``/``Not``, ``exp.Paren`` for parentheses;
  ``a || b`` ``exp.DPipe``; ``IS NULL`` ``exp.Is(this, Null)`` (``IS NOT NULL`` wrapped in
  ``exp.Not``; every ``NOT LIKE`` / ``NOT IN`` / ``NOT BETWEEN`` / ``NOT SIMILAR TO`` /
  ``IS NOT TRUE`` likewise ``exp.Not`` around the positive node); ``IS TRUE``/``IS FALSE``
  ``exp.Is(this, Boolean)``; ``x IS DISTINCT FROM y``
  ``exp.NullSafeNEQ``, ``x IS NOT DISTINCT FROM y`` ``exp.NullSafeEQ``; ``BETWEEN``
  ``exp.Between(this, low, high)``; ``LIKE`` ``exp.Like`` (with ``ESCAPE 'c'`` wrapped in
  ``exp.Escape(this=Like, expression=Literal)``), ``SIMILAR TO`` ``exp.SimilarTo``;
  ``x IN (1, 2)`` ``exp.In(this, expressions)``, ``x IN (SELECT ..)`` ``exp.In(this,
  query=exp.Subquery)``; ``EXISTS (SELECT ..)`` ``exp.Exists(this=Select)``; a scalar
  subquery ``exp.Subquery``; ``CASE`` ``exp.Case(this=operand?, ifs=[exp.If(this, true)],
  default)``; field access ``r.f`` on a ROW column is a Column/``exp.Dot`` (the binder decides
  whether a prefix is a table or a column).
- Table sources: ``LATERAL TABLE(f(x)) [AS] T(a, b)`` is ``exp.Lateral(this=Anonymous f,
  alias=TableAlias(T, columns))``; as ``, LATERAL TABLE(..)`` it is the ``this`` of an
  ``exp.Join`` with no ``kind``/``side`` (a comma join), as ``[LEFT] JOIN LATERAL TABLE(..)
  ON TRUE`` the ``this`` of a Join with that ``side`` and ``on``. ``TABLE(f(...))`` in FROM
  is ``exp.TableFromRows(this=Anonymous f, alias?)``: the window TVFs
  ``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))`` have a
  ``nodes.TableArgument(this=exp.Table)`` first argument, ``DESCRIPTOR(ts)`` is Anonymous
  ``DESCRIPTOR`` of Columns, and the named form ``DATA => TABLE t, TIMECOL => DESCRIPTOR(ts),
  SIZE => INTERVAL ..`` gives ``exp.Kwarg`` arguments. ``t FOR SYSTEM_TIME AS OF o.proc_time
  [AS r]`` is an ``exp.Table`` whose ``version`` is ``exp.Version(this='SYSTEM_TIME',
  kind='AS OF', expression=<the time expression>)``.
- Joins: ``exp.Join`` in the query's ``joins``; ``side`` ``'LEFT'|'RIGHT'|'FULL'`` or absent,
  ``kind`` ``'INNER'|'CROSS'|'OUTER'`` or absent, ``on`` / ``using``; a comma join is a Join
  with neither side, kind nor on.
- ``MATCH_RECOGNIZE`` raises ``UnsupportedFeatureError`` (flintlock has no CEP in SQL yet).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, ClassVar, cast

from sqlglot import exp, generator, parser, tokens
from sqlglot.dialects.dialect import Dialect, NormalizationStrategy
from sqlglot.errors import ParseError
from sqlglot.tokens import Token, TokenType  # type: ignore[attr-defined]

from flintlock.table.errors import UnsupportedFeatureError
from flintlock.table.sql.nodes import TableArgument, TypedLiteral

#: Keywords Flink calls like functions without parentheses.
NILADIC_FUNCTIONS = frozenset({
    "CURRENT_TIMESTAMP", "CURRENT_DATE", "CURRENT_TIME", "LOCALTIME", "LOCALTIMESTAMP",
    "CURRENT_ROW_TIMESTAMP", "CURRENT_USER",
})

#: Type keywords that form a typed literal in front of a string (``DATE '2020-01-01'``).
TYPED_LITERAL_TYPES = frozenset({"DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ"})

_TIME_UNITS = frozenset({
    "MILLENNIUM", "CENTURY", "DECADE", "YEAR", "YEARS", "QUARTER", "QUARTERS", "MONTH", "MONTHS",
    "WEEK", "WEEKS", "DAY", "DAYS", "HOUR", "HOURS", "MINUTE", "MINUTES", "SECOND", "SECONDS",
    "MILLISECOND", "MILLISECONDS", "MICROSECOND", "MICROSECONDS", "NANOSECOND", "NANOSECONDS",
    "DOW", "DOY", "EPOCH", "ISODOW", "ISOYEAR", "SQL_TSI_DAY", "SQL_TSI_HOUR", "SQL_TSI_MINUTE",
    "SQL_TSI_SECOND", "SQL_TSI_MONTH", "SQL_TSI_YEAR", "SQL_TSI_WEEK", "SQL_TSI_QUARTER",
})


class TokenParseError(ParseError):
    """sqlglot's ParseError carrying the offending token (``None`` at the end of the input);
    ``parser.py`` turns it into ``SqlParseError``. A ParseError subclass so that sqlglot's
    own backtracking (``_try_parse``) still catches it."""

    def __init__(self, description: str, token: Token | None) -> None:
        line, col = (token.line, token.col) if token else (0, 0)
        super().__init__(description, errors=[{"description": description, "line": line,
                                               "col": col}])
        self.description = description
        self.token = token


def type_text(node: exp.Expression) -> str:
    """The Flink type text a parsed ``exp.DataType`` carries, exactly as written."""
    if not isinstance(node, exp.DataType):
        raise TypeError(f"not a data type node: {node!r}")
    kind = node.args.get("kind")
    return str(kind) if kind is not None else node.sql()


def data_type_node(text: str) -> exp.DataType:
    """The ``exp.DataType`` flintlock's parser makes for a type written as ``text``."""
    return exp.DataType(this=exp.DType.USERDEFINED, kind=text)


def _first_word(token: Token) -> str:
    words = token.text.upper().split()
    return words[0] if words else ""


class FlinkTokenizer(tokens.Tokenizer):
    """Flink's lexical rules: backtick identifiers, ``''``-escaped single-quoted strings."""

    IDENTIFIERS: ClassVar = ["`"]
    QUOTES: ClassVar = ["'"]
    STRING_ESCAPES: ClassVar = ["'"]
    IDENTIFIER_ESCAPES: ClassVar = ["`"]
    HEX_STRINGS: ClassVar = [("x'", "'"), ("X'", "'")]
    COMMANDS: ClassVar = set()
    KEYWORDS: ClassVar = {
        key: value
        for key, value in tokens.Tokenizer.KEYWORDS.items()
        # sqlglot's cast operator and JSON arrows are not Flink SQL.
        if key not in {"::", "->", "->>", "#>", "#>>", "?::", "@>", "<@", "~~", "~~*"}
    }


def _no_paren_function_parsers() -> dict[str, Callable[[FlinkParser], exp.Expression]]:
    return {"CASE": lambda self: self._parse_case()}


class FlinkParser(parser.Parser):
    """sqlglot's parser taught Flink's query and expression syntax (see the module docstring).

    Every plain ``name(args)`` call is ``exp.Anonymous``: ``FUNCTIONS`` is empty so that no
    built-in or user function is rewritten into one of sqlglot's typed function nodes."""

    FUNCTIONS: ClassVar[dict[str, Callable[..., Any]]] = {}
    NO_PAREN_FUNCTIONS: ClassVar[dict[TokenType, type[exp.Expression]]] = {}
    NO_PAREN_FUNCTION_PARSERS: ClassVar = _no_paren_function_parsers()
    FUNCTION_PARSERS: ClassVar[dict[str, Callable[..., Any]]] = {
        "CAST": lambda self: self._parse_flink_cast(exp.Cast),
        "TRY_CAST": lambda self: self._parse_flink_cast(exp.TryCast),
        "EXTRACT": lambda self: self._parse_flink_extract(),
        "POSITION": lambda self: self._parse_position(),
        "TRIM": lambda self: self._parse_trim(),
        "SUBSTRING": lambda self: self._parse_substring(),
        "OVERLAY": lambda self: self._parse_overlay(),
        "CEIL": lambda self: self._parse_ceil_floor(exp.Ceil),
        "CEILING": lambda self: self._parse_ceil_floor(exp.Ceil),
        "FLOOR": lambda self: self._parse_ceil_floor(exp.Floor),
        "TIMESTAMPADD": lambda self: self._parse_unit_function("TIMESTAMPADD"),
        "TIMESTAMPDIFF": lambda self: self._parse_unit_function("TIMESTAMPDIFF"),
        "JSON_VALUE": lambda self: self._parse_flink_json_value(),
    }
    LAMBDAS: ClassVar = {
        TokenType.FARROW: lambda self, expressions: self.expression(
            exp.Kwarg(this=exp.var(expressions[0].name), expression=self._parse_tvf_argument())
        ),
    }
    VERSION_PHRASES: ClassVar[dict[tuple[str, ...], str]] = {
        ("FOR", "SYSTEM_TIME"): "SYSTEM_TIME",
    }
    FUNC_TOKENS: ClassVar = {*parser.Parser.FUNC_TOKENS, TokenType.SESSION}
    STRICT_CAST = True
    LOG_DEFAULTS_TO_LN = False

    # -- errors -------------------------------------------------------------------------------

    def raise_error(self, message: str, token: Token | None = None) -> None:
        """Raise at once with the offending token: the given one, else the current token,
        else ``None`` for the end of the input."""
        if token is None or token is parser.SENTINEL_NONE or not token:
            token = self._curr if self._curr else None
        raise TokenParseError(message, token)

    def _parse_match_recognize(self) -> exp.MatchRecognize | None:
        if self._curr.token_type is not TokenType.IDENTIFIER and (
            self._curr.text.upper() == "MATCH_RECOGNIZE"
        ):
            raise UnsupportedFeatureError("MATCH_RECOGNIZE")
        return None

    def _negate_range(self, this: exp.Expr | None = None) -> exp.Expr | None:
        """``x NOT LIKE p [ESCAPE c]`` is ``exp.Not`` around the LIKE, as every other NOT."""
        return self.expression(exp.Not(this=this)) if this else this

    def _parse_table_alias(
        self, alias_tokens: Collection[TokenType] | None = None
    ) -> exp.TableAlias | None:
        self._parse_match_recognize()
        return super()._parse_table_alias(alias_tokens)

    def _match_phrase(self, *words: str) -> bool:
        """Match ``words`` in order, also where the tokenizer made one token of several
        words (``PRIMARY KEY``, ``PARTITIONED BY``); nothing is consumed on a mismatch."""
        index = self._index
        remaining = list(words)
        while remaining:
            token = self._curr
            parts = token.text.upper().split() if token else []
            if not token or token.token_type in (TokenType.STRING, TokenType.IDENTIFIER) or (
                parts != remaining[: len(parts)]
            ):
                self._retreat(index)
                return False
            remaining = remaining[len(parts):]
            self._advance()
        return True

    def _expect(self, token_type: TokenType, text: str) -> None:
        if not self._match(token_type):
            self.raise_error(f'Was expecting "{text}"')

    def _expect_ahead(self, token_type: TokenType, text: str) -> None:
        """The current token must be ``text``; left for the caller to consume."""
        if self._curr.token_type != token_type:
            self.raise_error(f'Was expecting "{text}"')

    # -- types --------------------------------------------------------------------------------

    def _parse_flink_type(self, stop_words: Collection[str] = ()) -> exp.DataType:
        """Scan one type as written, up to a ``,`` or ``)`` outside of its own brackets, or
        (outside of them) one of ``stop_words``; returns it as text in a DataType node."""
        first = self._curr
        if not first or first.token_type in (
            TokenType.COMMA, TokenType.R_PAREN, TokenType.L_PAREN, TokenType.STRING,
            TokenType.NUMBER, TokenType.SEMICOLON,
        ):
            self.raise_error("Was expecting a data type")
        depth = 0
        last = first
        while self._curr:
            token = self._curr
            kind = token.token_type
            if depth == 0 and (
                kind in (TokenType.COMMA, TokenType.R_PAREN, TokenType.SEMICOLON)
                or (kind is not TokenType.IDENTIFIER and _first_word(token) in stop_words)
            ):
                break
            if kind is TokenType.L_PAREN:
                depth += 1
            elif kind is TokenType.R_PAREN:
                depth -= 1
            elif kind not in (TokenType.STRING, TokenType.IDENTIFIER):
                depth += token.text.count("<") - token.text.count(">")
                if depth < 0:
                    self.raise_error("Unbalanced '>' in a data type")
            last = token
            self._advance()
        if depth != 0:
            self.raise_error("Was expecting \">\" or \")\" closing the data type")
        return data_type_node(self.sql[first.start : last.end + 1])

    def _parse_flink_cast(self, node: type[exp.Cast]) -> exp.Expression:
        this = self._parse_disjunction()
        self._expect(TokenType.ALIAS, "AS")
        to = self._parse_flink_type()
        self._expect_ahead(TokenType.R_PAREN, ")")
        return self.expression(node(this=this, to=to))

    def _parse_type(
        self, parse_interval: bool = True, fallback_to_identifier: bool = False
    ) -> exp.Expr | None:
        token = self._curr
        if (
            token
            and token.token_type is not TokenType.IDENTIFIER
            and token.text.upper() in TYPED_LITERAL_TYPES
            and self._next.token_type is TokenType.STRING
        ):
            self._advance()
            to = data_type_node(token.text.upper())
            literal = exp.Literal.string(self._curr.text)
            self._advance()
            return self._parse_column_ops(self.expression(TypedLiteral(this=literal, to=to)))
        if token and token.token_type is not TokenType.IDENTIFIER and (
            token.text.upper() in NILADIC_FUNCTIONS
            and self._next.token_type is not TokenType.L_PAREN
            and self._prev.token_type is not TokenType.DOT
        ):
            self._advance()
            call = exp.Anonymous(this=token.text.upper(), expressions=[])
            return self._parse_column_ops(self.expression(call))
        if token and token.token_type is not TokenType.IDENTIFIER and (
            token.text.upper() == "MAP" and self._next.token_type is TokenType.L_BRACKET
        ):
            self._advance(2)
            entries = self._parse_csv(self._parse_disjunction)
            self._expect(TokenType.R_BRACKET, "]")
            if len(entries) % 2:
                self.raise_error("MAP[...] needs an even number of keys and values", token)
            keys = exp.Array(expressions=entries[0::2])
            values = exp.Array(expressions=entries[1::2])
            return self._parse_column_ops(self.expression(exp.VarMap(keys=keys, values=values)))
        return super()._parse_type(parse_interval, fallback_to_identifier)

    # -- special functions --------------------------------------------------------------------

    def _parse_flink_extract(self) -> exp.Expression:
        unit = self._curr
        if not unit or unit.text.upper() not in _TIME_UNITS:
            self.raise_error("Was expecting a time unit (YEAR, MONTH, DAY, HOUR, ...)")
        self._advance()
        self._expect(TokenType.FROM, "FROM")
        return self.expression(
            exp.Extract(this=exp.var(unit.text.upper()), expression=self._parse_bitwise())
        )

    def _parse_unit_function(self, name: str) -> exp.Expression:
        unit = self._curr
        if not unit or unit.text.upper() not in _TIME_UNITS:
            self.raise_error("Was expecting a time unit (YEAR, MONTH, DAY, HOUR, ...)")
        self._advance()
        args: list[exp.Expr | None] = [exp.var(unit.text.upper())]
        while self._match(TokenType.COMMA):
            arg = self._parse_disjunction()
            if arg is None:
                self.raise_error("Was expecting an expression")
            args.append(arg)
        self._expect_ahead(TokenType.R_PAREN, ")")
        return self.expression(exp.Anonymous(this=name, expressions=args))

    def _parse_required_column(self) -> exp.Expr:
        column = self._parse_column()
        if column is None:
            self.raise_error("Was expecting a column")
        return cast(exp.Expr, column)

    def _parse_flink_json_value(self) -> exp.Expression:
        this = self._parse_disjunction()
        self._expect(TokenType.COMMA, ",")
        path = self._parse_disjunction()
        returning = None
        if self._match(TokenType.RETURNING):
            returning = self._parse_flink_type(stop_words={"NULL", "ERROR", "DEFAULT"})
        empty = self._parse_on_handling("EMPTY", "NULL", "ERROR")
        error = self._parse_on_handling("ERROR", "NULL", "ERROR")
        condition = exp.OnCondition(empty=empty, error=error) if empty or error else None
        self._expect_ahead(TokenType.R_PAREN, ")")
        return self.expression(
            exp.JSONValue(this=this, path=path, returning=returning, on_condition=condition)
        )

    # -- table sources and function arguments -------------------------------------------------

    def _parse_table(
        self,
        schema: bool = False,
        joins: bool = False,
        alias_tokens: Collection[TokenType] | None = None,
        parse_bracket: bool = False,
        is_db_reference: bool = False,
        parse_partition: bool = False,
        consume_pipe: bool = False,
    ) -> exp.Expr | None:
        if not schema and not is_db_reference:
            if self._curr.token_type is TokenType.LATERAL and self._next.token_type is (
                TokenType.TABLE
            ):
                self._advance(2)
                return self._parse_table_function_source(exp.Lateral)
            if self._curr.token_type is TokenType.TABLE and self._next.token_type is (
                TokenType.L_PAREN
            ):
                self._advance()
                return self._parse_table_function_source(exp.TableFromRows)
        return super()._parse_table(
            schema=schema, joins=joins, alias_tokens=alias_tokens, parse_bracket=parse_bracket,
            is_db_reference=is_db_reference, parse_partition=parse_partition,
            consume_pipe=consume_pipe,
        )

    def _parse_table_function_source(
        self, node: type[exp.Lateral] | type[exp.TableFromRows]
    ) -> exp.Expression:
        self._expect(TokenType.L_PAREN, "(")
        call = self._parse_function()
        if not isinstance(call, (exp.Func, exp.Dot)):
            self.raise_error("Was expecting a table function call")
        self._expect(TokenType.R_PAREN, ")")
        alias = self._parse_table_alias()
        return self.expression(node(this=call, alias=alias))

    def _parse_lambda(self, alias: bool = False) -> exp.Expr | None:
        if self._curr.token_type is TokenType.TABLE and self._next.token_type is not (
            TokenType.L_PAREN
        ):
            return self._parse_tvf_argument()
        return super()._parse_lambda(alias)

    def _parse_tvf_argument(self) -> exp.Expr | None:
        """One argument of a table-valued function: ``TABLE t [PARTITION BY k, ..]`` or an
        expression."""
        if not self._match(TokenType.TABLE):
            return self._parse_disjunction()
        table = self._parse_table_parts()
        partition_by = None
        if self._match(TokenType.PARTITION_BY):
            if self._match(TokenType.L_PAREN):
                partition_by = self._parse_csv(self._parse_column)
                self._expect(TokenType.R_PAREN, ")")
            else:
                partition_by = [self._parse_required_column()]
        return self.expression(TableArgument(this=table, partition_by=partition_by))


def _typed_literal_sql(self: generator.Generator, node: TypedLiteral) -> str:
    return f"{type_text(node.args['to'])} {self.sql(node, 'this')}"


def _table_argument_sql(self: generator.Generator, node: TableArgument) -> str:
    partition = self.expressions(node, key="partition_by", flat=True)
    suffix = f" PARTITION BY {partition}" if partition else ""
    return f"TABLE {self.sql(node, 'this')}{suffix}"


def _anonymous_sql(self: generator.Generator, node: exp.Anonymous) -> str:
    name = node.this
    if isinstance(name, str) and name in NILADIC_FUNCTIONS and not node.expressions:
        return name
    return generator.Generator.anonymous_sql(self, node)


def _array_sql(self: generator.Generator, node: exp.Array) -> str:
    return f"ARRAY[{self.expressions(node, flat=True)}]"


def _map_sql(self: generator.Generator, node: exp.VarMap) -> str:
    keys = node.args["keys"].expressions
    values = node.args["values"].expressions
    pairs = ", ".join(f"{self.sql(k)}, {self.sql(v)}" for k, v in zip(keys, values, strict=True))
    return f"MAP[{pairs}]"


def _position_sql(self: generator.Generator, node: exp.StrPosition) -> str:
    return f"POSITION({self.sql(node, 'substr')} IN {self.sql(node, 'this')})"


def _trim_sql(self: generator.Generator, node: exp.Trim) -> str:
    position = node.args.get("position")
    chars = self.sql(node, "expression")
    if not position and not chars:
        return f"TRIM({self.sql(node, 'this')})"
    head = " ".join(part for part in (position or "BOTH", chars) if part)
    return f"TRIM({head} FROM {self.sql(node, 'this')})"


def _substring_sql(self: generator.Generator, node: exp.Substring) -> str:
    length = self.sql(node, "length")
    tail = f" FOR {length}" if length else ""
    return f"SUBSTRING({self.sql(node, 'this')} FROM {self.sql(node, 'start')}{tail})"


def _lateral_sql(self: generator.Generator, node: exp.Lateral) -> str:
    alias = self.sql(node, "alias")
    return f"LATERAL TABLE({self.sql(node, 'this')})" + (f" AS {alias}" if alias else "")


def _data_type_sql(self: generator.Generator, node: exp.DataType) -> str:
    kind = node.args.get("kind")
    if node.this == exp.DType.USERDEFINED and kind is not None:
        return str(kind)
    return generator.Generator.datatype_sql(self, node)


class FlinkGenerator(generator.Generator):
    """Prints a parsed tree back as Flink SQL (backtick identifiers, Flink's type text)."""

    TRANSFORMS: ClassVar = {
        **generator.Generator.TRANSFORMS,
        TypedLiteral: _typed_literal_sql,
        TableArgument: _table_argument_sql,
        exp.Anonymous: _anonymous_sql,
        exp.DataType: _data_type_sql,
        exp.Array: _array_sql,
        exp.Lateral: _lateral_sql,
        exp.VarMap: _map_sql,
        exp.StrPosition: _position_sql,
        exp.Trim: _trim_sql,
        exp.Substring: _substring_sql,
    }


class Flink(Dialect):
    """Flink SQL. Identifiers are case-sensitive and never normalised."""

    NORMALIZATION_STRATEGY = NormalizationStrategy.CASE_SENSITIVE
    NORMALIZE_FUNCTIONS = False
    DPIPE_IS_STRING_CONCAT = True
    NULL_ORDERING = "nulls_are_small"

    Tokenizer = FlinkTokenizer
    Parser = FlinkParser
    Generator = FlinkGenerator


#: The one dialect instance the front end uses.
FLINK = Flink()
