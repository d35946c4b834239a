// The Java Flink oracle of tests/evictors/test_evictors.py: the same window jobs with Flink's
// own evictors, run on Flink's local mini-cluster by generate_expected.py (PyFlink 2.3 has no
// Python evictors, so the reference is the Java API of the same Flink release). Each scenario
// prints a header line and then one line per window firing, formatted like the Python test.

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.functions.windowing.delta.DeltaFunction;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.evictors.CountEvictor;
import org.apache.flink.streaming.api.windowing.evictors.DeltaEvictor;
import org.apache.flink.streaming.api.windowing.evictors.Evictor;
import org.apache.flink.streaming.api.windowing.evictors.TimeEvictor;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.streaming.runtime.operators.windowing.TimestampedValue;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

public class EvictorsOracle {

    static final String[] KEYS = {"red", "blue", "red", "red", "blue", "red", "blue", "blue",
                                  "red", "blue", "red", "red", "blue", "red"};
    static final int[] VALUES = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7};

    /** Lists a window's elements: "key [v1, v2, ...]". */
    static class ListElements<W extends Window>
            extends ProcessWindowFunction<Tuple2<String, Integer>, String, String, W> {
        @Override
        public void process(String key, Context context,
                            Iterable<Tuple2<String, Integer>> elements, Collector<String> out) {
            List<Integer> values = new ArrayList<>();
            for (Tuple2<String, Integer> element : elements) {
                values.add(element.f1);
            }
            out.collect(key + " " + values);
        }
    }

    /** Removes odd values before the function and the oldest element after it. */
    static class OddsOutOldestGone implements Evictor<Object, Window> {
        @Override
        public void evictBefore(Iterable<TimestampedValue<Object>> elements, int size,
                                Window window, EvictorContext context) {
            for (Iterator<TimestampedValue<Object>> it = elements.iterator(); it.hasNext(); ) {
                @SuppressWarnings("unchecked")
                Tuple2<String, Integer> value = (Tuple2<String, Integer>) it.next().getValue();
                if (value.f1 % 2 == 1) {
                    it.remove();
                }
            }
        }

        @Override
        public void evictAfter(Iterable<TimestampedValue<Object>> elements, int size,
                               Window window, EvictorContext context) {
            Iterator<TimestampedValue<Object>> it = elements.iterator();
            if (it.hasNext()) {
                it.next();
                it.remove();
            }
        }
    }

    /** (count, sum) of a window's values, as "n=<count> sum=<sum>". */
    static class CountAndSum
            implements AggregateFunction<Tuple2<String, Integer>, Tuple2<Integer, Integer>, String> {
        public Tuple2<Integer, Integer> createAccumulator() { return Tuple2.of(0, 0); }
        public Tuple2<Integer, Integer> add(Tuple2<String, Integer> v, Tuple2<Integer, Integer> a) {
            return Tuple2.of(a.f0 + 1, a.f1 + v.f1);
        }
        public String getResult(Tuple2<Integer, Integer> a) { return "n=" + a.f0 + " sum=" + a.f1; }
        public Tuple2<Integer, Integer> merge(Tuple2<Integer, Integer> a, Tuple2<Integer, Integer> b) {
            return Tuple2.of(a.f0 + b.f0, a.f1 + b.f1);
        }
    }

    static class ByKey implements KeySelector<Tuple2<String, Integer>, String> {
        public String getKey(Tuple2<String, Integer> value) { return value.f0; }
    }

    static KeyedStream<Tuple2<String, Integer>, String> scores(StreamExecutionEnvironment env) {
        List<Tuple2<String, Integer>> data = new ArrayList<>();
        for (int i = 0; i < KEYS.length; i++) {
            data.add(Tuple2.of(KEYS[i], VALUES[i]));
        }
        return env.fromData(data, Types.TUPLE(Types.STRING, Types.INT)).keyBy(new ByKey());
    }

    /** Scores with event timestamps 0, 2, 4, ... (ms), in order. */
    static KeyedStream<Tuple2<String, Integer>, String> timedScores(StreamExecutionEnvironment env) {
        List<Tuple3<String, Integer, Long>> data = new ArrayList<>();
        for (int i = 0; i < KEYS.length; i++) {
            data.add(Tuple3.of(KEYS[i], VALUES[i], 2L * i));
        }
        return env.fromData(data, Types.TUPLE(Types.STRING, Types.INT, Types.LONG))
            .assignTimestampsAndWatermarks(
                WatermarkStrategy.<Tuple3<String, Integer, Long>>forMonotonousTimestamps()
                    .withTimestampAssigner((element, previous) -> element.f2))
            .map(element -> Tuple2.of(element.f0, element.f1))
            .returns(Types.TUPLE(Types.STRING, Types.INT))
            .keyBy(new ByKey());
    }

    static void show(String title, DataStream<String> stream) throws Exception {
        System.out.println("== " + title);
        try (CloseableIterator<String> results = stream.executeAndCollect(title)) {
            while (results.hasNext()) {
                System.out.println(results.next());
            }
        }
    }

    static WindowedStream<Tuple2<String, Integer>, String, GlobalWindow> everyThree(
            KeyedStream<Tuple2<String, Integer>, String> keyed) {
        return keyed.window(GlobalWindows.create()).trigger(CountTrigger.of(3));
    }

    public static void main(String[] args) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);

        show("count evictor 2, every 3",
             everyThree(scores(env)).evictor(CountEvictor.of(2)).process(new ListElements<>()));
        show("count evictor 2 after, every 3",
             everyThree(scores(env)).evictor(CountEvictor.of(2, true))
                 .process(new ListElements<>()));
        show("delta evictor 4, every 3",
             everyThree(scores(env)).evictor(DeltaEvictor.of(4.0,
                 (DeltaFunction<Tuple2<String, Integer>>) (a, b) -> Math.abs(a.f1 - b.f1)))
                 .process(new ListElements<>()));
        show("custom evictor, every 3",
             everyThree(scores(env)).evictor(new OddsOutOldestGone())
                 .process(new ListElements<>()));
        show("count evictor 1, every 3, reduce",
             everyThree(scores(env)).evictor(CountEvictor.of(1))
                 .reduce((a, b) -> Tuple2.of(a.f0, a.f1 + b.f1))
                 .map(t -> t.f0 + " " + t.f1).returns(Types.STRING));
        show("count evictor 0, every 3, aggregate",
             everyThree(scores(env)).evictor(CountEvictor.of(0)).aggregate(new CountAndSum()));
        show("time evictor 3 ms, tumbling 10 ms",
             timedScores(env).window(TumblingEventTimeWindows.of(Duration.ofMillis(10)))
                 .evictor(TimeEvictor.of(Duration.ofMillis(3))).process(new ListElements<>()));
        show("time evictor 3 ms after, tumbling 10 ms, sum",
             timedScores(env).window(TumblingEventTimeWindows.of(Duration.ofMillis(10)))
                 .evictor(TimeEvictor.of(Duration.ofMillis(3), true)).sum(1)
                 .map(t -> t.f0 + " " + t.f1).returns(Types.STRING));
        show("time evictor 1 ms, no timestamps, every 3",
             everyThree(scores(env)).evictor(TimeEvictor.of(Duration.ofMillis(1)))
                 .process(new ListElements<>()));
    }
}
