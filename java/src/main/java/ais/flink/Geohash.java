package ais.flink;

/** Geohash cells: their bounds and centre, as the cells the job keys its windows by. */
final class Geohash {
    private static final String BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz";

    private Geohash() {}

    /** {south, west, north, east} of a geohash cell. */
    static double[] bounds(String hash) {
        double south = -90, north = 90, west = -180, east = 180;
        boolean lon = true;
        for (int i = 0; i < hash.length(); i++) {
            int bits = BASE32.indexOf(hash.charAt(i));
            if (bits < 0) {
                throw new IllegalArgumentException("not a geohash: " + hash);
            }
            for (int bit = 4; bit >= 0; bit--) {
                boolean high = ((bits >> bit) & 1) == 1;
                if (lon) {
                    double mid = (west + east) / 2;
                    if (high) {
                        west = mid;
                    } else {
                        east = mid;
                    }
                } else {
                    double mid = (south + north) / 2;
                    if (high) {
                        south = mid;
                    } else {
                        north = mid;
                    }
                }
                lon = !lon;
            }
        }
        return new double[] {south, west, north, east};
    }

    /** The centre of a geohash cell: {lat, lon}. */
    static double[] center(String hash) {
        double[] b = bounds(hash);
        return new double[] {(b[0] + b[2]) / 2, (b[1] + b[3]) / 2};
    }
}
