"""Corner cases of the basic functions that user code hits by accident: a ``filter`` returning
non-bool values (truthiness decides), a ``flat_map`` returning a string (iterated character by
character) or a tuple, a ``flat_map`` returning an empty list, a keyed ``reduce`` whose key is
``None``, and empty strings as records. (A ``map`` returning ``None`` is left out: PyFlink
2.3.0 fails the job with a ``NullPointerException``.)

Parallelism 1; every job collected in order (undeclared types, so values stay Python objects).
"""

from pyflink.datastream import StreamExecutionEnvironment


def show(title, stream):
    print(title)
    with stream.execute_and_collect(title) as results:
        for result in results:
            print(repr(result))


def edge_cases():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    def words():
        return env.from_collection(["ab", "", "c", "", "def"])

    show("== filter by truthiness (len)", words().filter(lambda w: len(w)))
    show("== flat_map returning the string", words().flat_map(lambda w: w))
    show("== flat_map returning a tuple", words().flat_map(lambda w: (w, len(w))))
    show("== flat_map returning an empty list", words().flat_map(lambda w: []).map(str))
    show("== reduce with a None key",
         words().map(lambda w: (w or None, 1))
                .key_by(lambda pair: pair[0])
                .reduce(lambda a, b: (a[0], a[1] + b[1])))


if __name__ == "__main__":
    edge_cases()
