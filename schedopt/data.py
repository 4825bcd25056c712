"""Readers for the shared measured data (``--data-dir``, default ``../shared/data``).

The files are not ours to redistribute: they are read at run time and never
copied into the repository."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import numpy as np

from schedopt.errors import InputError

import os

#: the environment variable naming the shared data folder (when ``--data-dir`` is not given)
DATA_DIR_ENV = "SCHEDOPT_DATA_DIR"
#: where the folder sits next to a source checkout (``../shared/data`` from the repository)
SOURCE_TREE_DATA_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DEFAULT_DATA_DIR = SOURCE_TREE_DATA_DIR  # kept for the benchmark scripts' --data-dir default


def data_dir(given: str | Path | None = None) -> Path:
    """The shared data folder: ``given`` (``--data-dir``), else ``$SCHEDOPT_DATA_DIR``,
    else ``../shared/data`` from the working directory, else next to the source tree."""
    if given:
        return Path(given)
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV])
    here = Path("..") / "shared" / "data"
    return here if here.is_dir() else SOURCE_TREE_DATA_DIR


def _missing(path: Path) -> InputError:
    return InputError(str(path), f"file not found: pass --data-dir (or set {DATA_DIR_ENV}) to the shared data folder, "
                                 "the one holding traces/ and measured/")


def dl2_config_speeds(data_dir_: str | Path | None = None) -> dict[str, dict[str, object]]:
    """``measured/dl2_config_speed.txt`` (DL2 testbed, synchronous MXNet) by model:
    ``{model: {"batch": M, "points": array (n, 3) of (p, w, speed), "dropped": k}}``
    where speed is the sum of the per-worker speeds in mini-batches per second (the
    file's README). Rows whose measured speed is 0 (runs that made no progress) are
    dropped and counted."""
    path = data_dir(data_dir_) / "measured" / "dl2_config_speed.txt"
    if not path.is_file():
        raise _missing(path)
    rows: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    batch: dict[str, float] = {}
    dropped: dict[str, int] = defaultdict(int)
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            model, _mode, total_batch, n_ps, n_workers, per_worker, _ps_cpu, _w_cpu = ast.literal_eval(line)
        except (ValueError, SyntaxError) as exc:
            raise InputError(f"{path}:{i}", f"cannot parse line: {exc}") from None
        batch[model] = float(total_batch)
        speed = float(sum(per_worker))
        if speed > 0:
            rows[model].append((float(n_ps), float(n_workers), speed))
        else:
            dropped[model] += 1
    return {m: {"batch": batch[m], "points": np.array(pts), "dropped": dropped[m]} for m, pts in rows.items()}


def _read_csv_dicts(path: Path, need: tuple[str, ...]) -> list[dict[str, str]]:
    import csv

    if not path.is_file():
        raise _missing(path)
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in need if c not in (reader.fieldnames or [])]
        if missing:
            raise InputError(str(path), f"missing columns: {', '.join(missing)}")
        return list(reader)


def alibaba_nodes(data_dir_: str | Path | None = None) -> np.ndarray:
    """``traces/alibaba_openb_node_list_gpu_node.csv`` (Alibaba GPU cluster trace
    2023, Weng et al. ATC'23): node capacities as rows (cpu cores, gpu, mem_gb)."""
    path = data_dir(data_dir_) / "traces" / "alibaba_openb_node_list_gpu_node.csv"
    rows = _read_csv_dicts(path, ("cpu_milli", "memory_mib", "gpu"))
    return np.array([[int(r["cpu_milli"]) / 1000, int(r["gpu"]), int(r["memory_mib"]) / 1024] for r in rows], dtype=float)


def alibaba_pods(data_dir_: str | Path | None = None) -> tuple[np.ndarray, list[str]]:
    """``traces/alibaba_openb_pod_list_default.csv``: pod demands (cpu cores, gpu,
    mem_gb) and QoS classes. A pod's GPU demand is num_gpu · gpu_milli / 1000
    (fractional GPUs are shared GPUs)."""
    path = data_dir(data_dir_) / "traces" / "alibaba_openb_pod_list_default.csv"
    rows = _read_csv_dicts(path, ("cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "qos"))
    demand = np.array([[int(r["cpu_milli"]) / 1000, int(r["num_gpu"]) * int(r["gpu_milli"] or 0) / 1000,
                        int(r["memory_mib"]) / 1024] for r in rows], dtype=float)
    return demand, [r["qos"] for r in rows]


def mxnet_param_blocks(data_dir_: str | Path | None = None) -> dict[str, list[int]]:
    """``measured/mxnet_param_blocks.json``: MXNet's parameter blocks (parameters
    per block, in MXNet's order) by model name, e.g. resnet-50: 157 blocks."""
    import json

    path = data_dir(data_dir_) / "measured" / "mxnet_param_blocks.json"
    if not path.is_file():
        raise _missing(path)
    try:
        raw = json.loads(path.read_text())
        return {name: [int(b) for b in entry["block_sizes"]] for name, entry in raw.items()}
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(str(path), f"unexpected content: {exc}") from None


def philly_rows(data_dir_: str | Path | None = None) -> list[dict[str, str]]:
    """``traces/philly_jobs_adaptdl.csv`` as rows (timestamp, duration, num_gpus, gpu_time,
    cluster: the virtual cluster, Philly's tenant queue), in file order."""
    path = data_dir(data_dir_) / "traces" / "philly_jobs_adaptdl.csv"
    return _read_csv_dicts(path, ("timestamp", "duration", "num_gpus", "cluster"))


def philly_jobs(data_dir_: str | Path | None = None) -> np.ndarray:
    """``traces/philly_jobs_adaptdl.csv`` (Microsoft Philly, Jeon et al. ATC'19, via
    petuum/adaptdl): rows (submit time in s since the trace's first submission,
    duration s, GPUs), sorted by submit time."""
    from datetime import datetime

    path = data_dir(data_dir_) / "traces" / "philly_jobs_adaptdl.csv"
    rows = _read_csv_dicts(path, ("timestamp", "duration", "num_gpus"))
    try:
        t = np.array([datetime.strptime(r["timestamp"], "%Y-%m-%d %H:%M:%S").timestamp() for r in rows])
        out = np.array([[0.0, float(r["duration"]), float(r["num_gpus"])] for r in rows])
    except ValueError as exc:
        raise InputError(str(path), f"cannot parse a row: {exc}") from None
    out[:, 0] = t - t.min()
    return out[np.argsort(out[:, 0], kind="stable")]


def gavel_throughputs(data_dir_: str | Path | None = None) -> dict[str, dict[str, dict[int, float]]]:
    """``measured/gavel_isolated_throughputs.json`` (Gavel, OSDI'20; MIT): whole-job
    steps per second run alone, ``{job_type: {gpu_type: {gpus: steps_per_s}}}``;
    GPU types ``k80``, ``p100``, ``v100`` (packed on one server) and
    ``*_unconsolidated`` (spread over servers)."""
    import json

    path = data_dir(data_dir_) / "measured" / "gavel_isolated_throughputs.json"
    if not path.is_file():
        raise _missing(path)
    out: dict[str, dict[str, dict[int, float]]] = defaultdict(dict)
    try:
        for gpu_type, rows in json.loads(path.read_text())["gpu_types"].items():
            for row in rows:
                out[str(row["job_type"])].setdefault(str(gpu_type), {})[int(row["gpus"])] = float(row["steps_per_s"])
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(str(path), f"unexpected content: {exc}") from None
    return dict(out)
