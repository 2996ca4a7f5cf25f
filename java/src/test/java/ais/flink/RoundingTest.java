package ais.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.SplittableRandom;

import org.junit.jupiter.api.Test;

/**
 * The integer shortcuts for rounding and printing hours and speeds give exactly what the exact
 * decimal arithmetic gives (Python's {@code round} and {@code repr}, which the golden cases check).
 */
class RoundingTest {
    private static double exactHours(long ms) {
        return new BigDecimal((double) ms / 3_600_000.0).setScale(6, RoundingMode.HALF_EVEN).doubleValue();
    }

    private static double exactSog(long sum, long count) {
        return new BigDecimal((double) sum / (double) count / 1000.0).setScale(3, RoundingMode.HALF_EVEN).doubleValue();
    }

    @Test
    void hoursOfEveryMillisecondCountUpToTwoHoursAndOfLargeOnesAreTheExactRounding() {
        for (long ms = 0; ms <= 7_200_000; ms++) {
            double h = CellWindows.hours(ms);
            if (h != exactHours(ms)) {
                assertEquals(exactHours(ms), h, "hours of " + ms + " ms");
            }
        }
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 1_000_000; i++) {
            long ms = random.nextLong(1L << 44);
            assertEquals(exactHours(ms), CellWindows.hours(ms), "hours of " + ms + " ms");
        }
        assertEquals(3e-6, CellWindows.hours(9)); // a tie: the double's own digits decide (Python: 3e-06)
        assertEquals(0.0, CellWindows.hours(1));
    }

    @Test
    void meanSpeedsAreTheExactRounding() {
        SplittableRandom random = new SplittableRandom(11);
        for (int i = 0; i < 1_000_000; i++) {
            long count = 1 + random.nextInt(400);
            long sum = random.nextLong(102_300L * count + 1);
            assertEquals(exactSog(sum, count), CellWindows.averageSog(sum, count), sum + " / " + count);
        }
        assertEquals(0.0, CellWindows.averageSog(0, 3));
        assertEquals(10.5, CellWindows.averageSog(21_000, 2));
    }

    @Test
    void printedHoursAndSpeedsAreWhatPythonsReprPrints() {
        for (long ms = 0; ms <= 400_000; ms++) {
            double h = CellWindows.hours(ms);
            String fast = AggregateJson.pythonFloat6(h);
            if (!fast.equals(AggregateJson.pythonFloat6Exact(h))) {
                assertEquals(AggregateJson.pythonFloat6Exact(h), fast, "repr of " + h);
            }
        }
        SplittableRandom random = new SplittableRandom(13);
        for (int i = 0; i < 200_000; i++) {
            double h = CellWindows.hours(random.nextLong(1L << 40));
            assertEquals(AggregateJson.pythonFloat6Exact(h), AggregateJson.pythonFloat6(h));
            double sog = CellWindows.averageSog(random.nextLong(102_300_000L), 1 + random.nextInt(1000));
            assertEquals(AggregateJson.pythonFloat3Exact(sog), AggregateJson.pythonFloat3(sog));
        }
        assertEquals("2.8e-05", AggregateJson.pythonFloat6(2.8e-05));
        assertEquals("1e-05", AggregateJson.pythonFloat6(1e-05));
        assertEquals("0.0001", AggregateJson.pythonFloat6(0.0001));
        assertEquals("0.016667", AggregateJson.pythonFloat6(0.016667));
        assertEquals("2.0", AggregateJson.pythonFloat6(2.0));
        assertEquals("0.0", AggregateJson.pythonFloat6(0.0));
        assertEquals("102.3", AggregateJson.pythonFloat3(102.3));
        assertEquals("0.005", AggregateJson.pythonFloat3(0.005));
    }
}
