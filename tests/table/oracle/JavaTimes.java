// Oracle: java.time's toString for the print connector's DATE, TIME, TIMESTAMP and
// TIMESTAMP_LTZ values, at microsecond resolution (Python's datetime).
// Run: java tests/table/oracle/JavaTimes.java > tests/table/fixtures/java_times.txt
// Prints "<epoch microseconds> <LocalDateTime> <Instant> <LocalTime> <LocalDate>".
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Random;

public class JavaTimes {
    public static void main(String[] args) {
        Random random = new Random(28);
        StringBuilder out = new StringBuilder();
        long[] special = {0L, 1L, 1000L, 1000000L, 60000000L, 3600000000L, -1L, 1672567200123000L,
            1672567200000000L, 1672567200120000L, 1672567200123456L, -62135596800000000L};
        for (long micros : special) out.append(line(micros)).append('\n');
        for (int i = 0; i < 500; i++) {
            // years 1 to 9999, the range of Python's datetime
            long micros = Math.floorMod(random.nextLong(), 315537897600000000L) - 62135596800000000L;
            switch (i % 4) {
                case 0: micros -= micros % 1000000L; break;
                case 1: micros -= micros % 60000000L; break;
                case 2: micros -= micros % 1000L; break;
                default: break;
            }
            out.append(line(micros)).append('\n');
        }
        System.out.print(out);
    }

    static String line(long micros) {
        Instant instant = Instant.ofEpochSecond(Math.floorDiv(micros, 1000000L),
            Math.floorMod(micros, 1000000L) * 1000L);
        LocalDateTime local = LocalDateTime.ofInstant(instant, ZoneOffset.UTC);
        return micros + " " + local + " " + instant + " " + local.toLocalTime() + " " + local.toLocalDate();
    }
}
