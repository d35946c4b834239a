"""Keyed state in the plain functions of a keyed stream: ``map``, ``flat_map`` and ``filter``
after ``key_by`` may use keyed state, as in PyFlink. The records are instances of a class the
program defines (no declared type: pickled), so they cross the keyed exchange as Python
objects.

- ``NumberVisits`` (keyed ``map``, ``ValueState``): each click with the user's visit number.
- ``SessionTrail`` (keyed ``flat_map``, ``ListState``): after each click, the user's pages
  so far, when there are at least two.
- ``FirstOfEachPage`` (keyed ``filter``, ``MapState``): only a user's first click on a page.

Parallelism 2; each job collected and printed sorted.
"""

from dataclasses import dataclass

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import (
    FilterFunction,
    FlatMapFunction,
    MapFunction,
    RuntimeContext,
)
from pyflink.datastream.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor


@dataclass
class Click:
    user: str
    page: str


CLICKS = [Click("kim", "/a"), Click("lee", "/a"), Click("kim", "/b"), Click("kim", "/a"),
          Click("max", "/c"), Click("lee", "/c"), Click("kim", "/c"), Click("lee", "/a")]


class NumberVisits(MapFunction):

    def open(self, runtime_context: RuntimeContext):
        self.visits = runtime_context.get_state(ValueStateDescriptor("visits", Types.INT()))

    def map(self, value):
        visits = (self.visits.value() or 0) + 1
        self.visits.update(visits)
        return f"{value.user} visit {visits}: {value.page}"


class SessionTrail(FlatMapFunction):

    def open(self, runtime_context: RuntimeContext):
        self.trail = runtime_context.get_list_state(ListStateDescriptor("trail", Types.STRING()))

    def flat_map(self, value):
        self.trail.add(value.page)
        pages = list(self.trail.get())
        if len(pages) >= 2:
            yield f"{value.user} trail: {' > '.join(pages)}"


class FirstOfEachPage(FilterFunction):

    def open(self, runtime_context: RuntimeContext):
        self.seen = runtime_context.get_map_state(
            MapStateDescriptor("seen", Types.STRING(), Types.BOOLEAN()))

    def filter(self, value):
        if self.seen.contains(value.page):
            return False
        self.seen.put(value.page, True)
        return True


def show(title, stream):
    print(title)
    with stream.execute_and_collect(title) as results:
        for line in sorted(str(result) for result in results):
            print(line)


def keyed_functions():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    def by_user():
        return env.from_collection(CLICKS).key_by(lambda click: click.user)

    show("== keyed map", by_user().map(NumberVisits(), output_type=Types.STRING()))
    show("== keyed flat_map", by_user().flat_map(SessionTrail(), output_type=Types.STRING()))
    show("== keyed filter", by_user().filter(FirstOfEachPage()))


if __name__ == "__main__":
    keyed_functions()
