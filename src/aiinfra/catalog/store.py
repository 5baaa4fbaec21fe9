"""The catalog as an object: one reader per data file, parsed lazily, cached per instance.

:meth:`Catalog.default` is the shipped data; :meth:`Catalog.with_overlay` returns a new catalog in which a
user's folder adds or replaces rows (by id) of the files in :data:`OVERLAY_FILES`. Anything built from the
rows (validated specs, engine profiles, the efficiency table) is memoised on the instance
(:meth:`Catalog.memo`), so an overlay's rows never leak into another catalog. :func:`active` is the catalog
the module-level lookups read; :func:`use` makes another one active for a block (a context variable, so
concurrent tasks keep their own).
"""

from __future__ import annotations

import contextvars
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from aiinfra.catalog.parse import cached, code_identity, file_identity, load_rows, parser_identity
from aiinfra.errors import DataError, SpecError, UnknownIdError
from aiinfra.errors import suggest as suggest  # re-exported: catalog.suggest
from aiinfra.specs.engine import RuntimeReserve as RuntimeReserve  # re-exported: catalog.RuntimeReserve

if TYPE_CHECKING:
    from aiinfra.catalog.engines import EngineProfile
    from aiinfra.specs.benchmark import BenchmarkSpec
    from aiinfra.specs.hardware import AcceleratorSpec, InterconnectSpec, SystemSpec
    from aiinfra.specs.model import ModelArch

T = TypeVar("T")

KINDS = ("accelerators", "systems", "interconnects", "models", "benchmarks")

#: files an overlay folder may hold (paths relative to the folder, as under catalog/data/)
OVERLAY_FILES = ("accelerators.yaml", "systems.yaml", "efficiency.yaml", "prices/cloud.csv", "calibration.yaml")

#: CSV columns that stand for a YAML row's ``sources`` (prices/*.csv schema)
_CSV_SOURCE_COLUMNS = ("source_title", "read_on")


#: environment variable naming the refreshed-prices overlay folder (``off``: none)
PRICES_DIR_ENV = "AIINFRA_PRICES_DIR"


def refreshed_prices_dir() -> Path | None:
    """The overlay folder ``aiinfra prices refresh`` writes and every command reads: ``$AIINFRA_PRICES_DIR``, else
    ``prices-refreshed`` in the user's cache folder (platformdirs: ``$XDG_CACHE_HOME/aiinfra`` on Linux,
    ``~/Library/Caches/aiinfra`` on macOS, ``%LOCALAPPDATA%\\aiinfra\\Cache`` on Windows); None when the variable
    is ``off``."""
    env = os.environ.get(PRICES_DIR_ENV, "").strip()
    if env.lower() == "off":
        return None
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("aiinfra", appauthor=False)) / "prices-refreshed"


def shipped_dir() -> Path:
    """The folder of the shipped data files (catalog/data)."""
    here = Path(__file__).parent
    if here.is_dir():  # an installed or source tree (importlib.resources, for a zipped package only: start-up time)
        return here / "data"
    from importlib import resources

    return Path(str(resources.files("aiinfra.catalog").joinpath("data")))


def _spec_class(kind: str) -> Any:
    from aiinfra.specs.benchmark import BenchmarkSpec
    from aiinfra.specs.hardware import AcceleratorSpec, InterconnectSpec, SystemSpec
    from aiinfra.specs.model import ModelArch

    return {
        "accelerators": AcceleratorSpec,
        "systems": SystemSpec,
        "interconnects": InterconnectSpec,
        "models": ModelArch,
        "benchmarks": BenchmarkSpec,
    }[kind]


def _check_sources(where: str, name: str, row: dict[str, Any]) -> None:
    """An overlay row must say where its figures were read, like every shipped row."""
    row_id = str(row.get("id") or "?")
    if name.endswith(".csv"):
        missing = [c for c in _CSV_SOURCE_COLUMNS if not str(row.get(c) or "").strip()]
        if missing:
            raise SpecError(
                f"{where}[{row_id}].{missing[0]}",
                "(absent)",
                "every price row names its source",
                f"fill the {', '.join(missing)} column(s): the document the price was read from and the "
                "ISO date it was read",
            )
        return
    sources = row.get("sources")
    ok = isinstance(sources, list) and sources and all(isinstance(s, dict) and s.get("title") for s in sources)
    if not ok:
        raise SpecError(
            f"{where}[{row_id}].sources",
            sources if sources is not None else "(absent)",
            "every catalog row names where its figures were read",
            "add `sources: [{title: ..., url: ..., read_on: YYYY-MM-DD}]` to the row",
        )


class Catalog:
    """Sourced rows of every data file, read once per instance."""

    def __init__(
        self,
        root: Path,
        overlay_rows: dict[str, tuple[dict[str, Any], ...]] | None = None,
        overlay_dirs: tuple[Path, ...] = (),
        parent: Catalog | None = None,
    ) -> None:
        self.root = root
        """Folder of the base data files."""
        self._overlay_dirs = overlay_dirs
        self._overlay_rows = dict(overlay_rows or {})
        self._parent = parent
        self._files: dict[str, tuple[dict[str, Any], ...]] = {}
        self._memo: dict[str, Any] = {}

    _DEFAULT: Catalog | None = None

    @classmethod
    def default(cls) -> Catalog:
        """The shipped catalog (one instance per process)."""
        if cls._DEFAULT is None:
            cls._DEFAULT = cls(shipped_dir())
        return cls._DEFAULT

    _USER: tuple[float, _WithRefreshedPrices] | None = None
    """(when the refreshed prices were last looked at or the catalog was made, the catalog)"""

    #: seconds between looks at the refreshed prices (active() runs in hot loops: 60,000 times in one capacity
    #: search, where reading the environment and the file each time would cost whole percents)
    _USER_RECHECK_S = 2.0

    @classmethod
    def user_default(cls) -> Catalog:
        """The shipped catalog plus the refreshed prices (:func:`refreshed_prices_dir`) when that folder holds
        ``prices/cloud.csv``, looked for when a price file is first read (:class:`_WithRefreshedPrices`: a command
        that reads no price never looks); rebuilt when the file or its setting changes (looked at every few seconds
        at most; :meth:`forget_user_default` forces a look). A broken refreshed overlay is a SpecError naming it and
        the fix, raised where a price is read."""
        now = time.monotonic()
        held = cls._USER
        if held is not None and (now - held[0] < cls._USER_RECHECK_S or held[1].unchanged()):
            if now - held[0] >= cls._USER_RECHECK_S:
                cls._USER = (now, held[1])
            return held[1]
        cat = _WithRefreshedPrices(cls.default())
        cls._USER = (now, cat)
        return cat

    @classmethod
    def forget_user_default(cls) -> None:
        """Look at the refreshed prices again on the next :meth:`user_default` (after a refresh, or a change of
        ``$AIINFRA_PRICES_DIR`` in this process)."""
        cls._USER = None

    @property
    def overlay_dirs(self) -> tuple[Path, ...]:
        """User folders applied on top of the base, in order."""
        return self._overlay_dirs

    @property
    def shipped_base(self) -> Catalog:
        """The catalog this one was built on, overlays removed (the shipped one)."""
        return self._parent.shipped_base if self._parent is not None else self

    def __repr__(self) -> str:
        return f"Catalog(root={self.root}, overlays={[str(d) for d in self.overlay_dirs]})"

    # -- files ---------------------------------------------------------------------------------------------

    def path(self, name: str) -> Path:
        """Path of a base data file (``prices/cloud.csv``)."""
        return self.root / name

    def file_rows(self, name: str) -> tuple[dict[str, Any], ...]:
        """Rows of one data file (``accelerators.yaml``, ``prices/cloud.csv``) with the overlay's rows applied:
        a row whose id the base has replaces it in place, a new id is appended (efficiency rows: prepended, so a
        user's curve wins ties). () when the file does not exist."""
        if name not in self._files:
            base = self._parent.file_rows(name) if self._parent is not None else self._read(name)
            extra = self._overlay_rows.get(name, ())
            self._files[name] = _merge(base, extra, prepend=name.startswith("efficiency")) if extra else base
        return self._files[name]

    def _read(self, name: str) -> tuple[dict[str, Any], ...]:
        path = self.path(name)
        if not path.exists():
            return ()
        return tuple(load_rows(path))

    def raw_rows(self, kind: str) -> tuple[dict[str, Any], ...]:
        """Rows of ``<kind>.yaml`` as parsed (units still in the keys)."""
        return self.file_rows(f"{kind}.yaml")

    def efficiency_files(self) -> list[str]:
        """efficiency.yaml, then every ``efficiency_*.yaml`` of the base folder in name order."""
        extra = sorted(p.name for p in self.root.glob("efficiency_*.yaml"))
        return [n for n in ("efficiency.yaml", *extra) if self.path(n).exists() or self._overlay_rows_of(n)]

    def derived(self, name: str, slot: str, build: Callable[[tuple[dict[str, Any], ...]], T], code: str) -> T:
        """``build(self.file_rows(name))``. For a base file no overlay adds rows to, through the on-disk cache: one
        entry per ``slot`` and file, keyed by the file, the parser (the rows' shape) and ``code`` (the identity of
        what ``build`` runs and of the classes its value holds); an overlay's rows are built afresh."""
        path = self.path(name)
        if self._overlay_rows_of(name) or not path.exists():
            return build(self.file_rows(name))
        identity = f"{file_identity(path)}|{parser_identity()}|{code}"
        return cached(f"{slot}|{path.resolve()}", identity, lambda: build(self.file_rows(name)))

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """``build()`` once per catalog instance (tables derived from the rows)."""
        if key not in self._memo:
            self._memo[key] = build()
        value: T = self._memo[key]
        return value

    # -- overlay -------------------------------------------------------------------------------------------

    def with_overlay(self, directory: str | Path) -> Catalog:
        """A new catalog: this one plus the rows of ``directory`` (files of :data:`OVERLAY_FILES`). Every overlay
        row is checked now: it needs an id and sources, and accelerator and system rows must validate."""
        folder = Path(directory)
        if not folder.is_dir():
            raise SpecError(
                "catalog overlay", str(directory), "not a folder", "give a folder holding " + ", ".join(OVERLAY_FILES)
            )
        found = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
        unknown = [f for f in found if f.replace("\\", "/") not in OVERLAY_FILES and not f.endswith(".md")]
        if unknown:
            raise SpecError(
                "catalog overlay",
                str(folder / unknown[0]),
                "not a file an overlay can hold",
                "use one of " + ", ".join(OVERLAY_FILES),
            )
        rows: dict[str, tuple[dict[str, Any], ...]] = {}
        for name in OVERLAY_FILES:
            path = folder / name
            if not path.exists():
                continue
            try:
                parsed = load_rows(path)
            except DataError as exc:
                raise SpecError(str(path), "(file)", str(exc), "fix the file's syntax") from None
            for row in parsed:
                if not isinstance(row, dict) or not str(row.get("id") or "").strip():
                    raise SpecError(f"{path}", row, "every row needs an id", "add `id:` to the row")
                _check_sources(str(path), name, row)
            rows[name] = tuple(parsed)
        if "calibration.yaml" in rows:  # factors fitted by `aiinfra calibrate` (catalog/calibration.py)
            from aiinfra.catalog.calibration import check_rows

            check_rows(rows["calibration.yaml"], str(folder / "calibration.yaml"))
        out = Catalog(self.root, rows, (*self.overlay_dirs, folder), parent=self)
        for kind in ("accelerators", "systems"):
            if f"{kind}.yaml" in rows:
                ids = {str(r["id"]) for r in out._overlay_rows_of(f"{kind}.yaml")}
                out._memo[f"rows:{kind}"] = out._validated(kind, overlay_ids=ids, where=str(folder))
        return out

    # -- typed rows ----------------------------------------------------------------------------------------

    def rows(self, kind: str) -> dict[str, Any]:
        """All rows of one kind as spec objects, keyed by id."""
        if kind not in KINDS:
            import difflib  # only an error pays its import

            raise UnknownIdError("kind", kind, "catalog kinds", difflib.get_close_matches(kind, KINDS))
        return self.memo(f"rows:{kind}", lambda: self._validated(kind))

    def _validated(self, kind: str, overlay_ids: set[str] | None = None, where: str = "") -> dict[str, Any]:
        """Every row of ``kind`` validated into its spec. Shipped rows alone (no overlay rows of the kind) go
        through the on-disk cache, keyed by the data file and the validating code (:func:`parse.code_identity`):
        a hit holds what validating those same bytes with that same code gave."""
        if overlay_ids is None:
            overlay_ids = {str(r.get("id")) for r in self._overlay_rows_of(f"{kind}.yaml")}
        path = self.path(f"{kind}.yaml")
        if overlay_ids or not path.exists():
            return self._validate_rows(kind, overlay_ids, where)
        identity = f"{file_identity(path)}|{code_identity()}"
        return cached(f"specs|{path.resolve()}", identity, lambda: self._validate_rows(kind, overlay_ids, where))

    def _validate_rows(self, kind: str, overlay_ids: set[str], where: str) -> dict[str, Any]:
        from aiinfra.catalog.convert import si_row
        from aiinfra.specs.common import validate

        cls = _spec_class(kind)
        out: dict[str, Any] = {}
        for raw in self.raw_rows(kind):
            row_id = str(raw.get("id", "?"))
            if row_id in overlay_ids:  # a user's row: a SpecError naming the file, row and field
                spec: Any = validate(cls, si_row(raw), where=f"{where or 'overlay'}/{kind}.yaml[{row_id}]")
            else:
                try:
                    spec = validate(cls, si_row(raw), where=f"{kind}.yaml[{row_id}]")
                except Exception as exc:  # shipped data is broken: a bug, say where
                    raise DataError(f"catalog data {kind}.yaml row {row_id}: {exc}") from exc
            out[spec.id] = spec
        return out

    def _overlay_rows_of(self, name: str) -> tuple[dict[str, Any], ...]:
        inherited = self._parent._overlay_rows_of(name) if self._parent is not None else ()
        return (*inherited, *self._overlay_rows.get(name, ()))

    def get(self, kind: str, id_: str, field: str | None = None) -> Any:
        """The ``kind`` row ``id_``; an UnknownIdError on ``field`` (default ``<kind>.id``) with the nearest ids when
        there is none."""
        table = self.rows(kind)
        if id_ in table:
            return table[id_]
        raise UnknownIdError(field or f"{kind}.id", id_, kind, suggest(id_, list(table)))

    def accelerator(self, id_: str, field: str = "hardware.accelerator") -> AcceleratorSpec:
        """The accelerator ``id_`` (an UnknownIdError on ``field`` when unknown)."""
        spec: AcceleratorSpec = self.get("accelerators", id_, field)
        return spec

    def system(self, id_: str, field: str = "hardware.system") -> SystemSpec:
        """The system ``id_`` (an UnknownIdError on ``field`` when unknown)."""
        spec: SystemSpec = self.get("systems", id_, field)
        return spec

    def interconnect(self, id_: str, field: str = "interconnect") -> InterconnectSpec:
        """The interconnect ``id_`` (an UnknownIdError on ``field`` when unknown)."""
        spec: InterconnectSpec = self.get("interconnects", id_, field)
        return spec

    def model(self, id_: str, field: str = "model") -> ModelArch:
        """The model ``id_`` (an UnknownIdError on ``field`` when unknown)."""
        spec: ModelArch = self.get("models", id_, field)
        return spec

    def benchmark(self, id_: str, field: str = "benchmark") -> BenchmarkSpec:
        """The benchmark ``id_`` (an UnknownIdError on ``field`` when unknown)."""
        spec: BenchmarkSpec = self.get("benchmarks", id_, field)
        return spec

    def engine(self, name: str, field: str = "inference.engine") -> EngineProfile:
        """The serving engine's profile (engines.yaml row + its behaviours)."""
        from aiinfra.catalog.engines import profiles

        table = self.memo("engines", lambda: profiles(self.raw_rows("engines")))
        if name in table:
            return table[name]
        raise UnknownIdError(field, name, "serving engines", suggest(name, list(table)))

    def runtime_reserve(self) -> RuntimeReserve | None:
        """The framework memory reserve per accelerator (runtime.yaml's first row), None when the file has none.
        Each planner decides which parts apply (training always takes NCCL's share; inference only with tp > 1)."""

        def build() -> RuntimeReserve | None:
            rows = self.raw_rows("runtime")
            if not rows:
                return None
            row = rows[0]
            figures = {k: float(row[k]) for k in ("other_gb", "nccl_gb")}
            return RuntimeReserve(id=str(row["id"]), figures_gb=figures)

        return self.memo("runtime_reserve", build)

    def engine_names(self) -> tuple[str, ...]:
        """The ids of engines.yaml's rows, in file order."""
        return tuple(str(r["id"]) for r in self.raw_rows("engines"))


def _merge(
    base: tuple[dict[str, Any], ...], extra: tuple[dict[str, Any], ...], prepend: bool
) -> tuple[dict[str, Any], ...]:
    by_id = {str(r.get("id")): r for r in extra}
    merged = [by_id.pop(str(r.get("id")), r) for r in base]
    added = [r for r in extra if str(r.get("id")) in by_id]
    return tuple([*added, *merged] if prepend else [*merged, *added])


#: the files of the refreshed-prices folder (what ``aiinfra prices refresh`` writes there besides REFRESH.md)
REFRESHED_FILES = ("prices/cloud.csv",)


def _refreshed_prices_key() -> tuple[Path | None, tuple[str, int] | None]:
    """The refreshed-prices folder and its prices file's (path, mtime), None when the file is absent or off."""
    folder = refreshed_prices_dir()
    path = folder / REFRESHED_FILES[0] if folder is not None else None
    key = (str(path), path.stat().st_mtime_ns) if path is not None and path.is_file() else None
    return folder, key


class _WithRefreshedPrices(Catalog):
    """The shipped catalog with the refreshed prices laid over it, looked for on the first read of a file they may
    replace (:data:`REFRESHED_FILES`) or of the overlay folders: finding the folder imports platformdirs (≈ 10 ms)
    and stats the file, which a command reading no price (``infer``, ``train``) does not pay. Every other file reads
    the shipped rows. After the look, its rows are those of ``shipped.with_overlay(folder)``."""

    def __init__(self, shipped: Catalog) -> None:
        super().__init__(shipped.root, parent=shipped)
        self._shipped = shipped
        self._looked: tuple[tuple[str, int] | None, Catalog] | None = None
        """(the prices file's key when looked at, the catalog with its rows), None before the first price read"""

    def _priced(self) -> Catalog:
        if self._looked is None:
            folder, key = _refreshed_prices_key()
            cat = self._shipped
            if key is not None and folder is not None:
                try:
                    cat = cat.with_overlay(folder)
                except SpecError as exc:
                    raise SpecError(
                        str(folder),
                        "(refreshed prices)",
                        str(exc),
                        f"run `aiinfra prices refresh` again, or delete the folder, or set {PRICES_DIR_ENV}=off",
                    ) from None
            self._looked = (key, cat)
        return self._looked[1]

    def unchanged(self) -> bool:
        """Whether what this catalog read still stands: no price read yet, or the refreshed prices file (and the
        setting naming its folder) as when it was read."""
        return self._looked is None or _refreshed_prices_key()[1] == self._looked[0]

    @property
    def overlay_dirs(self) -> tuple[Path, ...]:
        """The refreshed-prices folder when it holds prices (looked for now), else none."""
        return self._priced().overlay_dirs

    def file_rows(self, name: str) -> tuple[dict[str, Any], ...]:
        """The refreshed rows of a prices file, the shipped rows of any other."""
        if name in REFRESHED_FILES:
            return self._priced().file_rows(name)
        return super().file_rows(name)

    def _overlay_rows_of(self, name: str) -> tuple[dict[str, Any], ...]:
        return self._priced()._overlay_rows_of(name) if name in REFRESHED_FILES else ()

    def __repr__(self) -> str:
        looked = "not looked for yet" if self._looked is None else repr(self._looked[1])
        return f"Catalog(root={self.root}, refreshed prices: {looked})"


_ACTIVE: contextvars.ContextVar[Catalog | None] = contextvars.ContextVar("aiinfra_catalog", default=None)


def active() -> Catalog:
    """The catalog lookups read now: the one :func:`use` set, else the shipped one with the refreshed prices
    (:meth:`Catalog.user_default`)."""
    return _ACTIVE.get() or Catalog.user_default()


@contextmanager
def use(cat: Catalog) -> Iterator[Catalog]:
    """Make ``cat`` the active catalog inside the block (restored on exit, also on error)."""
    token = _ACTIVE.set(cat)
    try:
        yield cat
    finally:
        _ACTIVE.reset(token)
