"""What the tests share: real components and how to start them, the job and the plain loop run
on the same input and compared, generated feeds and NMEA, the golden cases. Test modules import
from here, never from one another."""
