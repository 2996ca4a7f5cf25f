package ais.flink.jdbc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

class JsonRowsTest {
    @Test
    void namedFieldsAsTextNullsAsNullAndTheRestAsJson() throws SQLException {
        JsonRows rows = new JsonRows(new String[] {"id", "mmsi", "timestamp", "sog", "receiver", "missing", "*"});
        String record =
                "{\"id\":\"4a6c73c4-88ed-30f8-b0e2-1fa721912543\",\"mmsi\":244660000,\"msg_type\":5,"
                        + "\"timestamp\":\"2022-11-10T02:00:00.000Z\",\"sog\":0.00001,\"receiver\":null,"
                        + "\"shipname\":\"NORDIC \\\"X\\\"\",\"to_bow\":12.30,\"dims\":[1,2]}";
        assertArrayEquals(
                new String[] {
                    "4a6c73c4-88ed-30f8-b0e2-1fa721912543",
                    "244660000",
                    "2022-11-10T02:00:00.000Z",
                    "0.00001",
                    null,
                    null,
                    "{\"msg_type\":5,\"shipname\":\"NORDIC \\\"X\\\"\",\"to_bow\":12.30,\"dims\":[1,2]}"
                },
                rows.values(record));
    }

    @Test
    void aRecordThatIsNotJsonIsAnError() {
        JsonRows rows = new JsonRows(new String[] {"id"});
        assertThrows(SQLException.class, () -> rows.values("{not json"));
    }
}
