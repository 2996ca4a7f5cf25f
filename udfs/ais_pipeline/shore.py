"""Distance from a point to the nearest shore, in nautical miles, offline, from the land mask the
package already ships (global-land-mask: GLOBE's 30 arc-second grid, 1/120 degree, about 1 km,
True at sea, most lakes land; row 0 is latitude 90 going south, column 0 longitude -180 going
east, a point in the cell whose north-west corner is at or before it).

- **Coast.** The mask is coarsened to :data:`FACTOR` x :data:`FACTOR` fine cells (1/30 degree,
  2 arc-minutes): a coarse cell is land when any of its fine cells is. A coast cell is a land
  cell with a water cell north, south, east or west of it (longitude wraps; nothing is beyond a
  pole). The shore is the coast cells' centres (264,169 of them).
- **Distance.** Great-circle, on the sphere of the mean Earth radius, to the nearest coast-cell
  centre. A point on land (the fine mask's cell) is 0. A point at sea inside a coarse land cell
  (a river, a pond, a fjord's head) is no farther than that cell's own centre.
- **Accuracy.** Within the coarse cell's half-diagonal, h, of the distance to the mask's land:
  a land cell holds land within h of its centre, and the line from a point at sea to the nearest
  land enters a coast cell no farther away. h is 1.415 nm at the equator and less poleward (the
  cells narrow), so a point called beyond 50 nm is beyond 48.5 nm of the mask's land. Measured
  against the mask's land cells at 600 points within 80 nm of shore: -0.67 to +1.33 nm, 0.33 nm
  on average. The sphere is within 0.5 % of the ellipsoid (0.25 nm at 50 nm). The mask's own
  limits stay: rocks and islets smaller than its 1 km cells are not land, and most lakes are land.
- **Search.** Coast points are bucketed by 1-degree cells. A query takes the buckets of the
  latitude-longitude window that holds every point within a radius r of it (r = 1 degree first;
  the window spans all longitudes when the cap reaches a pole, and wraps at the antimeridian) and
  the nearest point in them; when that is farther than r, r becomes that distance (or doubles,
  when the window held none) and the window is searched again. The answer is the brute-force
  nearest coast point's exactly.
- **Cost** (measured on 2 busy cores). Built once from the mask in 8-12 s, 5-8 of them
  decompressing the mask, at 1.2 GB at its peak (the mask), and kept as ``shore-<key>.npz``
  (2 MB) in the package's cache (:func:`ais_pipeline.resources.cache_dir`), loaded again in
  0.1 s (22 MB in memory); held in memory alone when the cache cannot be written. A query takes
  about 50 microseconds within 60 nm of shore, 100-170 farther out, 3 on land.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import math
import os
import tempfile
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ais_pipeline.rules.tracks import EARTH_RADIUS_NM

FINE_PER_DEGREE = 120  # the land mask's cells per degree
FACTOR = 4  # fine cells per coarse cell's side: 1/30 degree
OFFSHORE_NM = 50.0  # Global Fishing Watch's distance from shore for gaps worth a look
START_RADIUS_DEG = 1.0
FORMAT = 1  # of the cached file; a change of the build changes it

_MASK_FILE = "globe_combined_mask_compressed.npz"
_BUCKET_ROWS, _BUCKET_COLS = 180, 360
_EPS_DEG = 1e-9  # a window's margin over its radius, for rounding
_BAND_ROWS = 300  # coarse rows coarsened at a time

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
Bits = npt.NDArray[np.uint64]


@dataclass(frozen=True, slots=True, eq=False)
class Shore:
    """The coast of a coarsened land mask and what answers where land is:

    ``land`` the coarse grid (packed bits, a row per coarse row), ``mixed`` the coarse land cells
    that are not all land (flat index, sorted) with ``mixed_bits`` their fine cells (bit
    ``row * factor + col``), ``coast`` the coast cells (flat index, sorted by bucket);
    ``vectors`` their centres as unit vectors and ``starts`` where each 1-degree bucket begins
    in them (row-major, from latitude 90 and longitude -180)."""

    factor: int
    land: npt.NDArray[np.uint8]
    mixed: Ints
    mixed_bits: Bits
    coast: Ints
    vectors: Floats
    starts: Ints

    @property
    def cols(self) -> int:
        return FINE_PER_DEGREE * 360 // self.factor

    @property
    def half_diagonal_nm(self) -> float:
        """The error bound at the equator."""
        side = math.radians(self.factor / FINE_PER_DEGREE) * EARTH_RADIUS_NM
        return side * math.sqrt(2) / 2

    @classmethod
    def build(cls, mask: Bools | None = None, factor: int = FACTOR) -> Shore:
        """From the land mask (global-land-mask's, read from its file, when not given)."""
        if mask is None:
            mask = read_mask()
        land, mixed, mixed_bits = coarsen(mask, factor)
        coast = coast_cells(land)
        return cls.of(factor, np.packbits(land, axis=1), mixed, mixed_bits, coast)

    @classmethod
    def of(cls, factor: int, land: npt.NDArray[np.uint8], mixed: Ints, mixed_bits: Bits, coast: Ints) -> Shore:
        """From the stored arrays: the coast cells' vectors and buckets derived."""
        lat, lon = cell_centres(coast, factor)
        buckets = _bucket(lat, lon)
        order = np.argsort(buckets, kind="stable")
        starts = np.searchsorted(buckets[order], np.arange(_BUCKET_ROWS * _BUCKET_COLS + 1)).astype(np.int64)
        return cls(factor, land, mixed, mixed_bits, coast[order], unit_vectors(lat[order], lon[order]), starts)

    def save(self, path: Path) -> None:
        """Written whole or not at all (a temporary file renamed)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".partial")
        try:
            with os.fdopen(fd, "wb") as out:
                np.savez_compressed(out, factor=np.int64(self.factor), land=self.land, mixed=self.mixed,
                                    mixed_bits=self.mixed_bits, coast=self.coast)  # fmt: skip
            os.replace(name, path)
        except BaseException:
            Path(name).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path) -> Shore:
        with np.load(path) as z:
            return cls.of(int(z["factor"]), z["land"], z["mixed"], z["mixed_bits"], z["coast"])

    def is_land(self, lat: float, lon: float) -> bool:
        """Whether the fine mask has land at the point (as ``globe.is_land``)."""
        i, j = fine_cell(lat, lon)
        ci, cj = i // self.factor, j // self.factor
        if not self._coarse_land(ci, cj):
            return False
        k = int(np.searchsorted(self.mixed, ci * self.cols + cj))
        if k == len(self.mixed) or self.mixed[k] != ci * self.cols + cj:
            return True  # all land
        bit = (i % self.factor) * self.factor + j % self.factor
        return bool((int(self.mixed_bits[k]) >> bit) & 1)

    def distance_nm(self, lat: float, lon: float) -> float:
        """Nautical miles from the point to the shore: 0 on land."""
        if self.is_land(lat, lon):
            return 0.0
        nearest = self.coast_distance_nm(lat, lon)
        i, j = fine_cell(lat, lon)
        ci, cj = i // self.factor, j // self.factor
        if self._coarse_land(ci, cj):  # at sea inside a coarse land cell
            own_lat, own_lon = cell_centres(np.array([ci * self.cols + cj]), self.factor)
            own = _angle(unit_vectors(own_lat, own_lon)[0], unit_vector(lat, lon))
            nearest = min(nearest, own * EARTH_RADIUS_NM)
        return nearest

    def _coarse_land(self, row: int, col: int) -> bool:
        return bool((self.land[row, col >> 3] >> (7 - (col & 7))) & 1)

    def coast_distance_nm(self, lat: float, lon: float) -> float:
        """Nautical miles from the point to the nearest coast-cell centre, searched in windows of
        buckets around it (land or sea alike)."""
        _check(lat, lon)
        lon = _wrap(lon)
        q = unit_vector(lat, lon)
        radius = START_RADIUS_DEG
        while True:
            points = self.vectors[_spans(self.starts, lat, lon, radius)]
            if len(points):
                best = _angle(points[int(np.argmax(points @ q))], q)
                if math.degrees(best) <= radius or radius >= 180:
                    return best * EARTH_RADIUS_NM
                radius = min(180.0, math.degrees(best))
            elif radius >= 180:
                return math.inf
            else:
                radius = min(180.0, 2 * radius)

    def far_from_shore(self, lat: float, lon: float, nm: float = OFFSHORE_NM) -> bool:
        """Whether the point is more than ``nm`` from the shore."""
        return self.distance_nm(lat, lon) > nm


def read_mask() -> Bools:
    """global-land-mask's grid as True on land (its file holds True at sea), read from its file
    (importing the package would load it for good: 1 GB), its orientation checked."""
    spec = importlib.util.find_spec("global_land_mask")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("global-land-mask is not installed")
    with np.load(Path(spec.origin).parent / _MASK_FILE) as z:
        lat, lon, mask = z["lat"], z["lon"], z["mask"]
    step = 1 / FINE_PER_DEGREE
    expected = (180 * FINE_PER_DEGREE, 360 * FINE_PER_DEGREE)
    if (
        mask.shape != expected
        or mask.dtype != np.bool_
        or not np.allclose(lat, 90 - step * np.arange(expected[0]))
        or not np.allclose(lon, -180 + step * np.arange(expected[1]))
    ):
        raise ValueError("global-land-mask's grid is not the one this module reads")
    land = np.ascontiguousarray(mask)
    return np.logical_not(land, out=land)


def coarsen(mask: Bools, factor: int) -> tuple[Bools, Ints, Bits]:
    """The coarse grid (land when any fine cell is), the coarse land cells that are not all land
    (flat indices) and their fine cells as bits."""
    if FINE_PER_DEGREE % factor or factor * factor > 64:
        raise ValueError(f"a coarse cell of {factor} fine cells does not tile a degree in 64 bits")
    rows, cols = mask.shape[0] // factor, mask.shape[1] // factor
    land, full = np.empty((rows, cols), dtype=bool), np.empty((rows, cols), dtype=bool)
    for band in range(0, rows, _BAND_ROWS):  # a band at a time: little held beside the mask
        by_rows = mask[band * factor : (band + _BAND_ROWS) * factor].reshape(-1, factor, mask.shape[1])
        land[band : band + _BAND_ROWS] = np.logical_or.reduce(by_rows, axis=1).reshape(-1, cols, factor).any(axis=2)
        full[band : band + _BAND_ROWS] = np.logical_and.reduce(by_rows, axis=1).reshape(-1, cols, factor).all(axis=2)
    mixed = np.flatnonzero(land & ~full)
    blocks = mask.reshape(rows, factor, cols, factor)[mixed // cols, :, mixed % cols, :]
    weights = np.left_shift(np.uint64(1), np.arange(factor * factor, dtype=np.uint64))
    bits = (blocks.reshape(len(mixed), -1).astype(np.uint64) * weights).sum(axis=1, dtype=np.uint64)
    return land, mixed.astype(np.int64), bits


def coast_cells(land: Bools) -> Ints:
    """Land cells with a water cell north, south, east or west (flat indices); longitude wraps."""
    water = ~land
    beside = np.roll(water, 1, axis=1) | np.roll(water, -1, axis=1)
    beside[1:] |= water[:-1]
    beside[:-1] |= water[1:]
    return np.flatnonzero(land & beside).astype(np.int64)


def cell_centres(cells: Ints, factor: int) -> tuple[Floats, Floats]:
    """(latitude, longitude) of coarse cells' centres, from their flat indices."""
    cols = FINE_PER_DEGREE * 360 // factor
    size = factor / FINE_PER_DEGREE
    return 90 - (cells // cols + 0.5) * size, -180 + (cells % cols + 0.5) * size


def fine_cell(lat: float, lon: float) -> tuple[int, int]:
    """The land mask's (row, column) of a point."""
    _check(lat, lon)
    row = min(int((90 - lat) * FINE_PER_DEGREE), 180 * FINE_PER_DEGREE - 1)
    col = int((_wrap(lon) + 180) * FINE_PER_DEGREE) % (360 * FINE_PER_DEGREE)
    return row, col


def unit_vector(lat: float, lon: float) -> Floats:
    return unit_vectors(np.array([lat]), np.array([lon]))[0]


def unit_vectors(lat: Floats, lon: Floats) -> Floats:
    phi, lam = np.radians(lat), np.radians(lon)
    return np.stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)], axis=-1)


def _angle(a: Floats, b: Floats) -> float:
    """The angle between two unit vectors, from their chord (precise when small)."""
    chord = float(np.linalg.norm(a - b))
    return 2 * math.asin(min(1.0, chord / 2))


def _bucket(lat: Floats, lon: Floats) -> Ints:
    row = np.minimum(np.floor(90 - lat), _BUCKET_ROWS - 1).astype(np.int64)
    col = np.floor(lon + 180).astype(np.int64) % _BUCKET_COLS
    return row * _BUCKET_COLS + col


def _check(lat: float, lon: float) -> None:
    if not (-90 <= lat <= 90) or not math.isfinite(lon):
        raise ValueError(f"not a position: latitude {lat}, longitude {lon}")


def _wrap(lon: float) -> float:
    """Longitude in [-180, 180)."""
    return (lon + 180) % 360 - 180


def _window_cols(lat: float, lon: float, radius: float) -> list[tuple[int, int]]:
    """The bucket columns (first, last) that hold every point within ``radius`` degrees of the
    point: all of them when the cap reaches a pole, else those of the cap's widest longitudes."""
    if abs(lat) + radius >= 90:
        return [(0, _BUCKET_COLS - 1)]
    sine = math.sin(math.radians(radius)) / math.cos(math.radians(lat))
    half = math.degrees(math.asin(min(1.0, sine))) + _EPS_DEG
    first, last = math.floor(lon - half + 180), math.floor(lon + half + 180)
    if last - first + 1 >= _BUCKET_COLS:
        return [(0, _BUCKET_COLS - 1)]
    if first < 0:
        return [(first + _BUCKET_COLS, _BUCKET_COLS - 1), (0, last)]
    if last >= _BUCKET_COLS:
        return [(first, _BUCKET_COLS - 1), (0, last - _BUCKET_COLS)]
    return [(first, last)]


def _spans(starts: Ints, lat: float, lon: float, radius: float) -> Ints:
    """The indices of the coast points in the buckets of the window of ``radius`` degrees around
    the point (a row's buckets in a column range are one run of points)."""
    top = max(0, math.floor(90 - (lat + radius + _EPS_DEG)))
    bottom = min(_BUCKET_ROWS - 1, math.floor(90 - (lat - radius - _EPS_DEG)))
    runs = []
    for first, last in _window_cols(lat, lon, radius):
        rows = np.arange(top, bottom + 1) * _BUCKET_COLS
        runs.append(np.stack([starts[rows + first], starts[rows + last + 1]], axis=1))
    spans = np.concatenate(runs)
    lengths = spans[:, 1] - spans[:, 0]
    offsets = spans[:, 0] - (np.cumsum(lengths) - lengths)  # a run's first index less the points before it
    return np.repeat(offsets, lengths) + np.arange(int(lengths.sum()))


def cache_file() -> Path:
    """Where the shore is kept: named by the build's format, its factor and the mask's version."""
    from ais_pipeline.resources import cache_dir

    version = importlib.metadata.version("global-land-mask")
    return cache_dir() / f"shore-{FORMAT}-{FACTOR}-{version}.npz"


def load_or_build(path: Path) -> Shore:
    """The shore kept at ``path``, else built and kept there (in memory alone when it cannot be
    written)."""
    try:
        return Shore.load(path)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        pass  # none yet, or not whole: built again
    shore = Shore.build()
    try:
        shore.save(path)
    except OSError:
        pass
    return shore


_default: Shore | None = None
_lock = threading.Lock()


def default_shore() -> Shore:
    """The shore of the default factor, loaded or built at first use, once per process."""
    global _default
    with _lock:
        if _default is None:
            _default = load_or_build(cache_file())
        return _default


def distance_to_shore_nm(lat: float, lon: float) -> float:
    """Nautical miles from the point to the nearest shore: 0 on land."""
    return default_shore().distance_nm(lat, lon)


def far_from_shore(lat: float, lon: float, nm: float = OFFSHORE_NM) -> bool:
    """Whether the point is more than ``nm`` (50 by default) from the shore."""
    return default_shore().far_from_shore(lat, lon, nm)
