"""Running a sweep's cells: in this process (``workers=1``) or as Ray tasks
(a local Ray started for the run, or an existing cluster by ``address``),
with a cache in the output folder so a rerun computes only missing cells.

Each finished cell is written to ``DIR/cells/KEY.json`` at once (atomically:
a temporary file renamed), so Ctrl-C leaves every finished cell on disk and
no half-written one. A failed cell is written to ``KEY.error.json`` and run
again next time.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterator

from schedopt.errors import InputError
from schedopt.sweeps.cells import cell_params, run_cell

Progress = Callable[[int, int, int, int], None]  # (done, failed, running, total)


class CellCache:
    """Finished cells under ``DIR/cells``; no folder: kept in memory only."""

    def __init__(self, out_dir: Path | None):
        self.dir = None if out_dir is None else Path(out_dir) / "cells"
        if self.dir is not None:
            self.dir.mkdir(parents=True, exist_ok=True)

    def get(self, key: str) -> dict[str, Any] | None:
        if self.dir is None:
            return None
        path = self.dir / f"{key}.json"
        if not path.is_file():
            return None
        try:
            record = json.loads(path.read_text())
            return record["row"] if record.get("row", {}).get("ok") else None
        except (OSError, ValueError, KeyError):
            return None  # unreadable: run it again

    def put(self, row: dict[str, Any], node: str | None) -> None:
        if self.dir is None:
            return
        name = f"{row['key']}.json" if row.get("ok") else f"{row['key']}.error.json"
        atomic_write(self.dir / name, json.dumps({"row": row, "node": node}, sort_keys=True, default=str))
        if row.get("ok"):
            (self.dir / f"{row['key']}.error.json").unlink(missing_ok=True)

    def nodes(self) -> dict[str, str | None]:
        """key -> the Ray node that ran it (None in process), over the cached cells."""
        out: dict[str, str | None] = {}
        for path in sorted((self.dir or Path("/nonexistent")).glob("*.json")):
            try:
                record = json.loads(path.read_text())
                out[record["row"]["key"]] = record.get("node")
            except (OSError, ValueError, KeyError):
                continue
        return out


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class InProcess:
    """Cells one after the other in this process."""

    def run(self, cells: list[dict[str, Any]], progress: Callable[[int], None]) -> Iterator[tuple[dict[str, Any], str | None]]:
        for cell in cells:
            progress(1)
            yield run_cell(cell), None

    def close(self) -> None:
        pass


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise InputError("--workers", "Ray is not installed: install schedopt[ray] (make install does), "
                                      "or run in this process with --workers 1") from None
    return ray


def start_ray(workers: int | None, address: str | None) -> tuple[Any, bool]:
    """Ray, initialised: a new local cluster with ``workers`` CPUs (default: the
    machine's) when ``address`` is None, else the cluster at ``address``. Returns
    (ray, whether this call started it, so the caller shuts it down)."""
    ray = _ray()
    if ray.is_initialized():
        return ray, False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address is None:
        kwargs.update(address="local", num_cpus=workers or os.cpu_count() or 1)  # a new cluster, not one already running
    else:
        kwargs["address"] = address
    try:
        ray.init(**kwargs)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise InputError("--address", f"cannot connect to Ray at {address or 'a new local cluster'}: {exc}") from None
    return ray, True


def _run_on_node(cell: dict[str, Any]) -> tuple[dict[str, Any], str]:
    import ray

    return run_cell(cell), ray.get_runtime_context().get_node_id()


class OnRay:
    """Cells as Ray tasks (one CPU each). ``address`` None starts a local Ray
    with ``workers`` CPUs (default: the machine's) for this run and stops it after."""

    def __init__(self, workers: int | None, address: str | None):
        self.ray, self.started = start_ray(workers, address)
        self.remote = self.ray.remote(num_cpus=1, max_retries=0)(_run_on_node)
        self.pending: dict[Any, dict[str, Any]] = {}

    def run(self, cells: list[dict[str, Any]], progress: Callable[[int], None]) -> Iterator[tuple[dict[str, Any], str | None]]:
        self.pending = {self.remote.remote(c): c for c in cells}
        progress(len(self.pending))
        while self.pending:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1)
            for ref in ready:
                cell = self.pending.pop(ref)
                try:
                    row, node = self.ray.get(ref)
                except Exception as exc:  # the task itself died (worker lost): a failed cell
                    row = {**cell_params(cell), "key": cell["key"], "ok": False,
                           "error": f"Ray task failed: {type(exc).__name__}: {exc}"}
                    node = None
                yield row, node

    def close(self) -> None:
        for ref in self.pending:
            self.ray.cancel(ref, force=True)
        self.pending = {}
        if self.started:
            self.ray.shutdown()


def run_cells(cells: list[dict[str, Any]], cache: CellCache, *, workers: int | None = None, address: str | None = None,
              progress: Progress | None = None) -> dict[str, dict[str, Any]]:
    """Rows of every cell by key: cached ones read, the others run. Ctrl-C
    stops the run (pending Ray tasks cancelled) and re-raises after the
    finished cells are on disk."""
    rows: dict[str, dict[str, Any]] = {}
    for c in cells:
        if (row := cache.get(c["key"])) is not None:
            rows[c["key"]] = row
    todo = [c for c in cells if c["key"] not in rows]
    state = {"done": len(rows), "failed": 0, "running": 0}

    def tell() -> None:
        if progress is not None:
            progress(state["done"], state["failed"], state["running"], len(cells))

    def started(n: int) -> None:  # n cells handed to the runner (queued or running)
        state["running"] = n
        tell()

    tell()
    if not todo:
        return rows
    runner: InProcess | OnRay = InProcess() if workers == 1 and address is None else OnRay(workers, address)
    finished = 0
    try:
        for row, node in runner.run(todo, started):
            cache.put(row, node)
            rows[row["key"]] = row
            finished += 1
            state["done" if row.get("ok") else "failed"] += 1
            state["running"] = 0 if isinstance(runner, InProcess) else len(todo) - finished
            tell()
    finally:
        runner.close()
    return rows
