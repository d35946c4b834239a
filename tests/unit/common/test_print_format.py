"""Declared types print as Java's toString, as PyFlink prints them."""

from flintlock.common import Instant, Row, Types
from flintlock.common.print_format import java_string


def test_composite_types_print_as_java_does():
    assert java_string(("k1", 1), Types.TUPLE([Types.STRING(), Types.INT()])) == "(k1,1)"
    assert java_string(Row(1, "v 1"), Types.ROW([Types.INT(), Types.STRING()])) == "+I[1,v 1]"
    assert java_string({"k1": 1}, Types.MAP(Types.STRING(), Types.INT())) == "{k1=1}"
    assert java_string([1, 2], Types.LIST(Types.INT())) == "[1, 2]"
    assert java_string(False, Types.BOOLEAN()) == "false"
    assert java_string(None, Types.STRING()) == "null"


def test_doubles_print_as_javas_double_to_string():
    cases = {1.0: "1.0", 1.5: "1.5", 1e20: "1.0E20", 12345678.0: "1.2345678E7",
             1e-5: "1.0E-5", -2.5e-7: "-2.5E-7", 0.001: "0.001", float("nan"): "NaN"}
    for value, text in cases.items():
        assert java_string(value, Types.DOUBLE()) == text


def test_undeclared_values_print_with_python_str():
    assert java_string(("k1", 1), None) == "('k1', 1)"


def test_a_positional_row_returned_for_row_named_takes_the_types_names():
    row = Types.ROW_NAMED(["shop", "n"], [Types.STRING(), Types.INT()]).coerce(Row("a", 1))
    assert row.shop == "a" and row.n == 1


def test_a_float_output_is_rounded_to_32_bits_as_pyflink_does():
    assert Types.FLOAT().coerce(0.1) == 0.10000000149011612
    assert Types.DOUBLE().coerce(0.1) == 0.1


def test_the_print_sink_shows_a_top_level_row_with_python_field_text():
    from flintlock.common.print_format import print_string

    inner = Types.ROW_NAMED(["a", "b"], [Types.STRING(), Types.DOUBLE()])
    outer = Types.ROW_NAMED(["inner", "flag"], [inner, Types.BOOLEAN()])
    value = Row(inner=Row(a="q", b=2.5), flag=False)
    assert print_string(value, outer) == "+I[Row(a='q', b=2.5),False]"
    assert print_string(Row(1, "v 1"), Types.ROW([Types.INT(), Types.STRING()])) == "+I[1,v 1]"
    assert print_string(5, Types.INT()) == "5"


def test_rows_nested_in_a_list_print_as_java_rows():
    rows = Types.LIST(Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.LONG()]))
    assert java_string([Row(k="a", v=1), Row(k="b", v=2)], rows) == "[+I[a, 1], +I[b, 2]]"


def test_rows_nested_in_containers_print_as_java_rows_with_null_fields():
    pair = Types.ROW_NAMED(["k", "v"], [Types.STRING(), Types.LONG()])
    assert java_string([Row(k="b", v=None)], Types.LIST(pair)) == "[+I[b, null]]"
    assert java_string({"x": Row(k="c", v=3)}, Types.MAP(Types.STRING(), pair)) == \
        "{x=+I[c, 3]}"


def test_instants_print_as_javas_iso_8601_text():
    cases = {
        Instant.of_epoch_milli(1_700_000_000_123): "2023-11-14T22:13:20.123Z",
        Instant(0, 0): "1970-01-01T00:00:00Z",
        Instant(951_782_400, 120_000): "2000-02-29T00:00:00.000120Z",
        Instant(-1, 5): "1969-12-31T23:59:59.000000005Z",
        Instant(253_402_300_800, 0): "+10000-01-01T00:00:00Z",
    }
    for instant, text in cases.items():
        assert java_string(instant, Types.INSTANT()) == text
    assert repr(Instant(1, 2)) == "Instant<1, 2>"
