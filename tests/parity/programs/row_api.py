"""The ``Row`` API user functions lean on, evaluated inside a job's function, and row kinds
through an exchange and the print sink.

Job 1: a ``flat_map`` builds rows every way PyFlink allows (positional, by keyword, as a
"row class" called with values, ``Row.of_kind``) and reports indexing, slicing, ``in``,
assignment, equality, ``as_dict`` and ``get_fields_by_names``. Job 2: rows of each
``RowKind`` declared as a ROW type cross a keyed exchange and reach the print sink
(``-U[...]``, ``+U[...]``, ``-D[...]``). Parallelism 1; job 1 collected in order, job 2 printed
in order.
"""

from pyflink.common import Row, RowKind, Types
from pyflink.datastream import StreamExecutionEnvironment


def explore(_):
    point = Row("x", "y")
    p = point(3, 4)
    yield f"row class: {p!r} x={p.x} y={p['y']} len={len(p)}"
    named = Row(name="ada", age=36, tags=["a", "b"])
    yield f"by keyword: {named!r}"
    yield f"slice: {named[0:2]!r}, 'age' in row: {'age' in named}, 36 in row: {36 in named}"
    named["age"] = 37
    named[0] = "Ada"
    yield f"after assignment: {named!r}"
    yield f"equal with fields in another order: {Row(a=1, b=2) == Row(b=2, a=1)}"
    yield f"positional equals positional: {Row(1, 2) == Row(1, 2)}, named vs positional: " \
          f"{Row(a=1, b=2) == Row(1, 2)}"
    nested = Row(outer=Row(inner=1), items=[Row(k=1)])
    yield f"as_dict: {nested.as_dict()!r}"
    yield f"as_dict(recursive=True): {nested.as_dict(recursive=True)!r}"
    yield f"get_fields_by_names: {named.get_fields_by_names(['tags', 'name'])!r}"
    retract = Row.of_kind(RowKind.UPDATE_BEFORE, 1, "old")
    yield f"of_kind: {retract!r} kind={retract.get_row_kind()} str={retract.get_row_kind()!s}"
    yield f"kinds: {[str(kind) for kind in RowKind]}"
    yield f"positional repr: {Row(1, 'a')!r}"


def changelog(i):
    kind = [RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE][i]
    return Row.of_kind(kind, key=f"k{i % 2}", value=i * 10)


def row_api():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    explored = env.from_collection([0], type_info=Types.INT()) \
        .flat_map(explore, output_type=Types.STRING())
    with explored.execute_and_collect("row_api explore") as results:
        for line in results:
            print(line)

    row_type = Types.ROW_NAMED(["key", "value"], [Types.STRING(), Types.INT()])
    env.from_collection([0, 1, 2, 3], type_info=Types.INT()) \
        .map(changelog, output_type=row_type) \
        .key_by(lambda row: row.key) \
        .map(lambda row: row, output_type=row_type) \
        .print()
    env.execute("row_api kinds")


if __name__ == "__main__":
    row_api()
