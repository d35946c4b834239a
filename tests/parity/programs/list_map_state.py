"""``MapState`` and ``ListState`` in keyed functions.

Sessions of page views per user (parallelism 2):

- ``PageCounter`` keeps a ``MapState`` page → views per user and emits the user's page counts
  (sorted by page) after every third view.
- ``RecentPages`` keeps a ``ListState`` of the user's last three pages and emits the list on
  every view, then trims it.

Both streams are collected and printed sorted: two subtasks interleave their output.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor

VIEWS = [
    ("u1", "/home"), ("u2", "/home"), ("u1", "/docs"), ("u3", "/blog"), ("u1", "/home"),
    ("u2", "/pricing"), ("u2", "/home"), ("u3", "/blog"), ("u1", "/docs"), ("u3", "/home"),
    ("u1", "/blog"), ("u2", "/docs"), ("u1", "/home"), ("u3", "/blog"), ("u2", "/home"),
]


class PageCounter(KeyedProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.pages = runtime_context.get_map_state(
            MapStateDescriptor("pages", Types.STRING(), Types.INT()))
        self.views = runtime_context.get_state(ValueStateDescriptor("views", Types.INT()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        page = value[1]
        if self.pages.contains(page):
            self.pages.put(page, self.pages.get(page) + 1)
        else:
            self.pages.put(page, 1)
        views = (self.views.value() or 0) + 1
        self.views.update(views)
        if views % 3 == 0:
            counts = ",".join(f"{page}={count}" for page, count in sorted(self.pages.items()))
            yield f"{ctx.get_current_key()} after {views} views: {counts}" \
                  f" ({len(list(self.pages.keys()))} pages, {sum(self.pages.values())} views)"


class RecentPages(KeyedProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.recent = runtime_context.get_list_state(ListStateDescriptor("recent", Types.STRING()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        self.recent.add(value[1])
        pages = list(self.recent.get())
        if len(pages) > 3:
            pages = pages[-3:]
            self.recent.update(pages)
        yield f"{ctx.get_current_key()} recent: {' '.join(pages)}"


def list_map_state():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    views = env.from_collection(VIEWS, type_info=Types.TUPLE([Types.STRING(), Types.STRING()]))
    by_user = views.key_by(lambda view: view[0])
    counts = by_user.process(PageCounter(), output_type=Types.STRING())
    recent = by_user.process(RecentPages(), output_type=Types.STRING())

    with counts.union(recent).execute_and_collect("list_map_state") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    list_map_state()
