// Oracle: Java's Double.toString / Float.toString / BigDecimal.toString on the JDK Flink runs on.
// Run: java tests/table/oracle/JavaNumbers.java > tests/table/fixtures/java_numbers.txt
// Prints "d <long bits hex> <text>", "f <int bits hex> <text>", "b <unscaled> <scale> <text>".
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Random;

public class JavaNumbers {
    public static void main(String[] args) {
        Random random = new Random(28);
        StringBuilder out = new StringBuilder();
        double[] special = {0.0, -0.0, 1.0, -1.0, 0.1, 0.001, 0.0001, 9999999.0, 1.0E7, 1.0E-3,
            123456789.125, 2.82879384806159E17, 1.0E21, 1.0E23, 2.0E23, 4.9E-324, Double.MAX_VALUE,
            Double.MIN_NORMAL, 1.0 / 3, 2.0 / 3, 100.0, 1.5, 12345678.9, 0.00012345, 9.999999E6,
            1.0E16, 1.0E17, 1.0E18, 9.223372036854775E18, 9.2233720368547758E18, 1.7976931348623157E308};
        for (double d : special) out.append(line(d)).append('\n');
        for (float f : new float[] {0.1f, 1.0E10f, 123456792f, 16777217f, 1.0f / 3, 3.4028235E38f,
                1.4E-45f, 1.17549435E-38f, 0.3333333f, 9999999f, 1.0E7f, 33554434f, 1.0E-3f}) {
            out.append(line(f)).append('\n');
        }
        for (int i = 0; i < 1500; i++) {
            double d;
            switch (i % 6) {
                case 0: d = Double.longBitsToDouble(random.nextLong()); break;
                case 1: d = (double) (random.nextLong() >> random.nextInt(63)); break;
                case 2: d = random.nextInt(1000000) / Math.pow(10, random.nextInt(12)); break;
                case 3: d = random.nextDouble() * Math.pow(10, random.nextInt(40) - 20); break;
                case 4: d = Math.scalb((double) random.nextInt(1 << 20), random.nextInt(80) - 10); break;
                default: d = random.nextGaussian() * 1.0E7; break;
            }
            if (Double.isNaN(d)) continue;
            out.append(line(d)).append('\n');
            float f = (i % 2 == 0) ? (float) d : Float.intBitsToFloat(random.nextInt());
            if (!Float.isNaN(f)) out.append(line(f)).append('\n');
        }
        for (int i = 0; i < 300; i++) {
            BigInteger unscaled = BigInteger.valueOf(random.nextLong() >> random.nextInt(64));
            int scale = random.nextInt(20);
            out.append("b ").append(unscaled).append(' ').append(scale).append(' ')
               .append(new BigDecimal(unscaled, scale)).append('\n');
        }
        System.out.print(out);
    }

    static String line(double d) {
        return "d " + Long.toHexString(Double.doubleToRawLongBits(d)) + " " + Double.toString(d);
    }

    static String line(float f) {
        return "f " + Integer.toHexString(Float.floatToRawIntBits(f)) + " " + Float.toString(f);
    }
}
