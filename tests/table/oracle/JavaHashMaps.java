// Oracle: the iteration order of java.util.HashMap for keys of the types the print connector
// shows (String, Integer, Long, Double, Boolean, LocalDate), maps of 1 to 60 entries.
// Run: java tests/table/oracle/JavaHashMaps.java > tests/table/fixtures/java_hash_maps.txt
// Prints "<type> <keys in insertion order> | <keys in iteration order>", keys joined by ','.
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Random;

public class JavaHashMaps {
    public static void main(String[] args) {
        Random random = new Random(28);
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < 240; i++) {
            int size = 1 + random.nextInt(60);
            String type = new String[] {"STRING", "INT", "BIGINT", "DOUBLE", "BOOLEAN", "DATE"}[i % 6];
            List<Object> keys = new ArrayList<>();
            HashMap<Object, Integer> map = new HashMap<>();
            for (int j = 0; j < size; j++) {
                Object key;
                switch (type) {
                    case "STRING": key = randomString(random); break;
                    case "INT": key = random.nextInt() >> random.nextInt(32); break;
                    case "BIGINT": key = random.nextLong() >> random.nextInt(64); break;
                    case "DOUBLE": key = Math.round(random.nextGaussian() * 1000) / 8.0; break;
                    case "BOOLEAN": key = random.nextBoolean(); break;
                    default: key = LocalDate.ofEpochDay(random.nextInt(800000) - 400000); break;
                }
                if (!map.containsKey(key)) { keys.add(key); map.put(key, j); }
            }
            out.append(type).append(' ').append(join(keys)).append(" | ")
               .append(join(new ArrayList<>(map.keySet()))).append('\n');
        }
        System.out.print(out);
    }

    static String randomString(Random random) {
        String alphabet = "abcxyzAZ09_中文é";
        StringBuilder text = new StringBuilder();
        int length = 1 + random.nextInt(8);
        for (int i = 0; i < length; i++) text.append(alphabet.charAt(random.nextInt(alphabet.length())));
        return text.toString();
    }

    static String join(List<Object> keys) {
        StringBuilder text = new StringBuilder();
        for (Object key : keys) { if (text.length() > 0) text.append(','); text.append(key); }
        return text.toString();
    }
}
