"""Distance to shore (plain Python and numpy): places whose distance is known by hand (the middle
of the North Sea, a straight coast, the Pacific, the North Pole, across the antimeridian, on
land), the mask's land reproduced, the ring search against brute force, the error against the
mask's own land within the stated bound, and the cached file.

The shore is built once for the module from the packaged land mask (about 10 s)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import ais_pipeline.shore as shore_module
from ais_pipeline.shore import FINE_PER_DEGREE, Shore, load_or_build, read_mask, unit_vector, unit_vectors

pytestmark = pytest.mark.unit

R_NM = 6371.0088 / 1.852
FINE = 1 / FINE_PER_DEGREE


def haversine_nm(a: tuple[float, float], b: tuple[float, float]) -> float:
    (lat1, lon1), (lat2, lon2) = (tuple(map(math.radians, p)) for p in (a, b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * R_NM * math.asin(math.sqrt(h))


@dataclass
class Built:
    shore: Shore
    cells: list[tuple[float, float, bool]]  # fine cells' centres, and whether the mask has land there
    near: list[tuple[float, float, float]]  # points at sea near the shore, and their distance to the mask's land


def mask_land_nm(mask: np.ndarray, lat: float, lon: float, reach_nm: float) -> float:
    """Distance to the nearest point of the mask's land cells (boxes) within reach, by brute force."""
    span = reach_nm / 60 + 0.05
    lon_span = span / math.cos(math.radians(abs(lat) + span))
    i0, i1 = max(0, int((90 - lat - span) * 120)), min(mask.shape[0] - 1, int((90 - lat + span) * 120))
    cols = np.arange(int((lon - lon_span + 180) * 120), int((lon + lon_span + 180) * 120) + 1) % mask.shape[1]
    rows, js = np.nonzero(mask[i0 : i1 + 1][:, cols])
    north = 90 - (rows + i0) * FINE
    west = (-180 + cols[js] * FINE - lon + 180) % 360 - 180 + lon  # unwrapped around the point
    nearest = unit_vectors(np.clip(lat, north - FINE, north), np.clip(lon, west, west + FINE))
    chord = float(np.linalg.norm(nearest - unit_vector(lat, lon), axis=1).min())
    return 2 * math.asin(chord / 2) * R_NM


@pytest.fixture(scope="module")
def built() -> Built:
    mask = read_mask()
    shore = Shore.build(mask)
    rng = np.random.default_rng(20)
    rows = rng.integers(0, mask.shape[0], 3000)
    cols = rng.integers(0, mask.shape[1], 3000)
    mixed = rng.choice(shore.mixed, 3000)  # fine cells of the coarse cells that are part land
    f = shore.factor
    rows = np.concatenate([rows, mixed // shore.cols * f + rng.integers(0, f, 3000)])
    cols = np.concatenate([cols, mixed % shore.cols * f + rng.integers(0, f, 3000)])
    cells = [
        (90 - (i + 0.5) * FINE, -180 + (j + 0.5) * FINE, bool(mask[i, j])) for i, j in zip(rows, cols, strict=True)
    ]
    near = []
    coast_lat, coast_lon = shore_module.cell_centres(shore.coast, f)
    while len(near) < 150:  # up to 80 nm off a coast cell, as seen from it
        k, reach, bearing = rng.integers(len(shore.coast)), rng.uniform(0, 80) / 60, rng.uniform(0, 2 * math.pi)
        lat = coast_lat[k] + reach * math.cos(bearing)
        lon = (coast_lon[k] + reach * math.sin(bearing) / math.cos(math.radians(coast_lat[k])) + 180) % 360 - 180
        if abs(lat) < 84 and not shore.is_land(lat, lon):
            near.append((lat, lon, mask_land_nm(mask, lat, lon, shore.distance_nm(lat, lon) + 2)))
    return Built(shore, cells, near)


@pytest.fixture
def shore(built: Built) -> Shore:
    return built.shore


def ocean_points(shore: Shore, n: int, seed: int, lat_range=(-90.0, 90.0), lon_range=(-180.0, 180.0)):
    rng = np.random.default_rng(seed)
    lo, hi = (math.sin(math.radians(v)) for v in lat_range)
    out: list[tuple[float, float]] = []
    while len(out) < n:
        lat = math.degrees(math.asin(rng.uniform(lo, hi)))
        lon = (rng.uniform(*lon_range) + 180) % 360 - 180
        if not shore.is_land(lat, lon):
            out.append((lat, lon))
    return out


def brute_force_nm(shore: Shore, lat: float, lon: float) -> float:
    q = unit_vector(lat, lon)
    p = shore.vectors[int(np.argmax(shore.vectors @ q))]
    return 2 * math.asin(min(1.0, float(np.linalg.norm(p - q)) / 2)) * R_NM


def test_the_error_bound_is_the_coarse_cells_half_diagonal(shore: Shore):
    assert shore.half_diagonal_nm == pytest.approx(math.sqrt(2) * R_NM * math.radians(1 / 30) / 2)
    assert 1.41 < shore.half_diagonal_nm < 1.42


def test_the_middle_of_the_north_sea_is_150_nm_from_the_yorkshire_coast(shore: Shore):
    point = (56.0, 3.0)
    robin_hoods_bay, flamborough_head = (54.434, -0.534), (54.116, -0.075)
    hand = min(haversine_nm(point, robin_hoods_bay), haversine_nm(point, flamborough_head))
    assert 153 < hand < 154
    assert shore.distance_nm(*point) == pytest.approx(hand, abs=3)
    assert haversine_nm(point, (57.12, 8.6)) > 190  # Hanstholm, Denmark: farther


def test_60_nm_off_the_straight_coast_of_the_landes(shore: Shore):
    """The Côte d'Argent runs north-south within 0.06 degree of longitude from 44.6 to 45.3 N;
    Lacanau-Océan is on it at 44.9946 N, 1.2023 W. A point 60 nm west along the parallel."""
    lacanau = (44.9946, -1.2023)
    point = (lacanau[0], lacanau[1] - 60 / (R_NM * math.radians(1) * math.cos(math.radians(lacanau[0]))))
    assert haversine_nm(point, lacanau) == pytest.approx(60, abs=0.01)
    assert shore.distance_nm(*point) == pytest.approx(60, abs=shore.half_diagonal_nm + 0.5)
    assert shore.far_from_shore(*point, 50) and not shore.far_from_shore(*point, 65)


def test_far_in_the_pacific(shore: Shore):
    # the equator at 140 W: the nearest land is Hatutu, the northernmost of the Marquesas (2 km wide)
    hatutu = (-7.933, -140.567)
    assert shore.distance_nm(0.0, -140.0) == pytest.approx(haversine_nm((0.0, -140.0), hatutu), abs=3)
    # Point Nemo: 2688 km (1451 nm, on the ellipsoid) from Ducie, Motu Nui and Maher Island
    assert shore.distance_nm(-48.8767, -123.3933) == pytest.approx(2688 / 1.852, rel=0.005)
    assert shore.far_from_shore(0.0, -140.0)


def test_a_point_on_land_is_0(shore: Shore):
    for lat, lon in ((51.5074, -0.1278), (23.0, 13.0), (-25.0, 134.0), (-90.0, 0.0), (-80.0, 0.0)):
        assert shore.is_land(lat, lon)
        assert shore.distance_nm(lat, lon) == 0.0
        assert not shore.far_from_shore(lat, lon)


def test_across_the_antimeridian_near_fiji(shore: Shore):
    """West of the antimeridian, north of Fiji, the nearest land is Futuna (centre 14.28 S,
    178.15 W, 10 km wide) across it; Fiji's islands on the point's own side are farther."""
    point = (-13.5, 179.9)
    to_futuna = haversine_nm(point, (-14.283, -178.15))
    d = shore.distance_nm(*point)
    assert to_futuna - 6 < d < to_futuna
    assert d == shore.distance_nm(-13.5, 179.9 - 360) == shore.distance_nm(-13.5, 179.9 + 360)
    same_side = shore_module.cell_centres(shore.coast, shore.factor)[1] > 0
    q = unit_vector(*point)
    nearest_same_side = math.acos(float((shore.vectors[same_side] @ q).max())) * R_NM
    assert nearest_same_side > d + 20
    assert shore.distance_nm(-16.0, 180.0) == shore.distance_nm(-16.0, -180.0)


def test_the_north_pole_is_382_nm_from_greenland(shore: Shore):
    # Kaffeklubben Island (83.66 N), off Cape Morris Jesup, is 707 km from the pole
    for lon in (0.0, 90.0, -135.0, 180.0):
        assert shore.distance_nm(90.0, lon) == pytest.approx(707 / 1.852, abs=3)
    assert shore.distance_nm(89.0, 0.0) < shore.distance_nm(90.0, 0.0) < shore.distance_nm(89.0, 180.0)


def test_the_land_of_the_mask_is_reproduced(built: Built):
    wrong = [(lat, lon, land) for lat, lon, land in built.cells if built.shore.is_land(lat, lon) != land]
    assert wrong == []
    assert any(land for *_, land in built.cells) and not all(land for *_, land in built.cells)


def test_the_ring_search_is_the_brute_force(shore: Shore):
    points = (
        ocean_points(shore, 300, seed=1)
        + ocean_points(shore, 100, seed=2, lat_range=(-60, 60), lon_range=(177, 183))
        + ocean_points(shore, 50, seed=3, lat_range=(75, 90))
        + ocean_points(shore, 50, seed=4, lat_range=(-90, -55))
    )
    differ = [(lat, lon) for lat, lon in points if shore.coast_distance_nm(lat, lon) != brute_force_nm(shore, lat, lon)]
    assert differ == []


def test_within_the_half_diagonal_of_the_distance_to_the_masks_land(built: Built):
    errors = [built.shore.distance_nm(lat, lon) - exact for lat, lon, exact in built.near]
    assert max(abs(e) for e in errors) <= built.shore.half_diagonal_nm
    assert sum(abs(e) for e in errors) / len(errors) < 0.6


def test_at_sea_inside_a_coarse_land_cell_is_no_farther_than_its_centre(shore: Shore):
    """A fine water cell of a coarse land cell that is no coast cell (a lake or river in land):
    the coast cells may be far, the cell's own land is not."""
    inland = np.setdiff1d(shore.mixed, shore.coast)
    k = np.searchsorted(shore.mixed, inland)
    some = np.flatnonzero(shore.mixed_bits[k] != (1 << shore.factor**2) - 1)[0]  # one with a water cell
    bits, cell = int(shore.mixed_bits[k[some]]), int(inland[some])
    water = next(b for b in range(shore.factor**2) if not bits >> b & 1)
    row = cell // shore.cols * shore.factor + water // shore.factor
    col = cell % shore.cols * shore.factor + water % shore.factor
    lat, lon = 90 - (row + 0.5) * FINE, -180 + (col + 0.5) * FINE
    assert not shore.is_land(lat, lon)
    assert 0 < shore.distance_nm(lat, lon) <= shore.half_diagonal_nm


def test_positions_off_the_globe_are_refused(shore: Shore):
    for lat, lon in ((91.0, 0.0), (-90.5, 0.0), (math.nan, 0.0), (0.0, math.nan), (0.0, math.inf)):
        with pytest.raises(ValueError):
            shore.distance_nm(lat, lon)
    assert shore.distance_nm(0.0, -140.0) == shore.distance_nm(0.0, 220.0)


def test_the_shore_is_kept_in_a_file_and_loaded_from_it(shore: Shore, tmp_path: Path, monkeypatch):
    path = tmp_path / "cache" / "shore.npz"
    shore.save(path)
    assert [p.name for p in path.parent.iterdir()] == ["shore.npz"]

    def no_build(*args, **kwargs):
        raise AssertionError("built again")

    monkeypatch.setattr(Shore, "build", no_build)
    loaded = load_or_build(path)
    for name in ("land", "mixed", "mixed_bits", "coast", "vectors", "starts"):
        assert np.array_equal(getattr(loaded, name), getattr(shore, name))
    points = ocean_points(shore, 20, seed=5)
    assert [loaded.distance_nm(*p) for p in points] == [shore.distance_nm(*p) for p in points]


def test_a_broken_file_is_built_again_and_replaced(shore: Shore, tmp_path: Path, monkeypatch):
    path = tmp_path / "shore.npz"
    path.write_bytes(b"not a zip")
    monkeypatch.setattr(Shore, "build", classmethod(lambda cls, *a, **k: shore))
    assert load_or_build(path) is shore
    assert np.array_equal(Shore.load(path).coast, shore.coast)


def test_the_module_functions_use_one_shore(shore: Shore, monkeypatch):
    monkeypatch.setattr(shore_module, "_default", shore)
    assert shore_module.default_shore() is shore
    assert shore_module.distance_to_shore_nm(0.0, -140.0) == shore.distance_nm(0.0, -140.0)
    assert shore_module.far_from_shore(0.0, -140.0) and not shore_module.far_from_shore(51.5, -0.13)
    assert shore_module.cache_file().name.startswith(f"shore-{shore_module.FORMAT}-{shore_module.FACTOR}-")
