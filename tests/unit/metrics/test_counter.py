"""The metrics ``Counter``: the C accelerator's type where it was built, and its Python twin
(``PythonCounter``). Both keep PyFlink's API; the C type holds a 64-bit count, as Flink's
``long``, and refuses to pass its bounds rather than wrap."""

import pytest

from flintlock.common.speedups import accelerator
from flintlock.metrics import Counter, Metric
from flintlock.runtime.metrics import MetricKind
from flintlock.runtime.metrics.metrics import PythonCounter

KINDS = [PythonCounter] + ([Counter] if Counter is not PythonCounter else [])
INT64_MAX = 2**63 - 1


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__module__)
def test_inc_dec_and_get_count_follow_pyflink(kind):
    counter = kind()
    assert counter.get_count() == 0
    counter.inc()
    counter.inc(5)
    counter.dec()
    counter.dec(2)
    counter.inc(-4)
    assert counter.get_count() == -1
    assert isinstance(counter, Metric) and counter.kind is MetricKind.COUNTER


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__module__)
def test_an_amount_that_is_no_integer_is_refused_and_the_count_kept(kind):
    counter = kind()
    counter.inc(3)
    for amount in ["1", None]:
        with pytest.raises(TypeError):
            counter.inc(amount)
    assert counter.get_count() == 3


@pytest.mark.skipif(accelerator is None, reason="the C accelerator is not built here")
def test_the_compiled_counter_is_the_c_type_itself_and_stops_at_64_bits():
    """Not a Python subclass: CPython's fast call of a C method checks the exact type."""
    assert Counter is accelerator.Counter
    counter = Counter()
    counter.inc(INT64_MAX)
    with pytest.raises(OverflowError):
        counter.inc()
    assert counter.get_count() == INT64_MAX
    counter.dec(INT64_MAX)
    counter.dec()
    counter.dec(INT64_MAX)
    assert counter.get_count() == -(2**63)
    with pytest.raises(OverflowError):
        counter.dec()
    with pytest.raises(OverflowError):
        counter.inc(2**63)
    with pytest.raises(TypeError):
        counter.inc(1, 2)
    assert counter.get_count() == -(2**63)
