"""Reading DL2 policy files (.npz) at the door (issue 41 §1).

A policy file is a zip of .npy members. Before anything is decompressed, every
member is checked: a known name, at most :data:`MAX_MEMBER_BYTES` uncompressed,
an .npy header whose shape and dtype are sane (no object arrays, no pickles);
after reading, the layout tag, ``J``, the type list and every weight array
(real, finite, of the shape the layout declares) are checked. Any problem is one
:class:`InputError` naming the file and the member; nothing else is raised.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from schedopt.errors import InputError

#: the largest member (uncompressed) and the largest file read
MAX_MEMBER_BYTES = 64 * 2**20
MAX_TOTAL_BYTES = 256 * 2**20
#: the most state rows a policy may declare, and the most layers of one network
MAX_ROWS = 100_000
MAX_LAYERS = 16
MAX_WIDTH = 16_384

_NAME = re.compile(r"^(layout|J|types|features|(rows|stop|v)_(sizes|W\d{1,2}|b\d{1,2}))$")


def read_policy_arrays(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of a policy file, each checked before it is decompressed."""
    src = str(path)
    p = Path(path)
    if not p.is_file():
        raise InputError(src, "not a file" if p.exists() else "file not found")
    if p.stat().st_size > MAX_TOTAL_BYTES:
        raise InputError(src, f"file is larger than {MAX_TOTAL_BYTES // 2**20} MiB")
    try:
        zf = zipfile.ZipFile(p)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(src, f"not a DL2 policy (.npz, a zip of arrays): {exc or 'empty or truncated file'}") from None
    arrays: dict[str, np.ndarray] = {}
    with zf:
        infos = zf.infolist()
        total = 0
        for info in infos:
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if not _NAME.match(name):
                raise InputError(src, f"member {info.filename!r}: not part of a DL2 policy")
            if info.file_size > MAX_MEMBER_BYTES:
                raise InputError(src, f"member {info.filename!r}: {info.file_size:,} bytes uncompressed "
                                      f"(at most {MAX_MEMBER_BYTES // 2**20} MiB)")
            total += info.file_size
            if total > MAX_TOTAL_BYTES:
                raise InputError(src, f"more than {MAX_TOTAL_BYTES // 2**20} MiB uncompressed")
        for info in infos:
            name = info.filename[:-4]
            try:
                with zf.open(info) as fh:
                    version = np.lib.format.read_magic(fh)
                    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                                   else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = read_header(fh)  # the header only: nothing decompressed past it
                    if dtype.hasobject:
                        raise ValueError("object arrays are not allowed")
                    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
                    if count * max(1, dtype.itemsize) > MAX_MEMBER_BYTES:
                        raise ValueError(f"header declares {count:,} elements")
                with zf.open(info) as fh:
                    arrays[name] = np.lib.format.read_array(fh, allow_pickle=False)
            except InputError:
                raise
            except Exception as exc:  # a corrupt member, whatever the library raises
                raise InputError(src, f"member {info.filename!r}: cannot be read: {exc}") from None
    return arrays


def _scalar_int(arrays: dict[str, np.ndarray], key: str, src: str, low: int, high: int) -> int:
    a = arrays[key]
    if a.shape != () or not np.issubdtype(a.dtype, np.integer):
        raise InputError(src, f"member {key!r}: expected one integer, got an array of shape {a.shape} ({a.dtype})")
    v = int(a)
    if not low <= v <= high:
        raise InputError(src, f"member {key!r}: expected an integer in [{low}, {high}], got {v}")
    return v


def check_policy_arrays(arrays: dict[str, Any], src: str, row_size, global_size) -> None:
    """The arrays make sense for a policy: J, types, features, and each network's
    sizes and weights (real, finite, of the declared shapes, with the input width
    the layout implies). ``row_size(types, features)``/``global_size(features)``
    give the layout's widths."""
    for key in ("J", "types", "features", "rows_sizes", "stop_sizes", "v_sizes"):
        if key not in arrays:
            raise InputError(src, f"member {key!r} is missing: an incomplete DL2 policy")
    _scalar_int(arrays, "J", src, 1, MAX_ROWS)
    types = arrays["types"]
    if types.ndim != 1 or types.dtype.kind not in "U" or len(types) == 0:
        raise InputError(src, "member 'types': expected a non-empty list of job model names")
    if len(set(types.tolist())) != len(types):
        raise InputError(src, "member 'types': a model is listed twice")
    features = arrays["features"]
    if features.shape != () or features.dtype.kind != "U":
        raise InputError(src, "member 'features': expected one name")
    F, G = row_size(tuple(types.tolist()), str(features)), global_size(str(features))
    inputs = {"rows": F + G, "stop": G + F, "v": G + 2 * F}
    outputs = {"rows": 3, "stop": 1, "v": 1}
    for net in ("rows", "stop", "v"):
        sizes = arrays[f"{net}_sizes"]
        if sizes.ndim != 1 or not np.issubdtype(sizes.dtype, np.integer) or not 2 <= len(sizes) <= MAX_LAYERS + 1:
            raise InputError(src, f"member '{net}_sizes': expected 2-{MAX_LAYERS + 1} layer widths")
        widths = [int(s) for s in sizes]
        if any(not 1 <= w <= MAX_WIDTH for w in widths):
            raise InputError(src, f"member '{net}_sizes': widths must be in [1, {MAX_WIDTH}], got {widths}")
        if widths[0] != inputs[net] or widths[-1] != outputs[net]:
            raise InputError(src, f"member '{net}_sizes': {widths} does not fit the layout (input {inputs[net]}, "
                                  f"output {outputs[net]} for {len(types)} types and features {str(features)!r})")
        for k, (a, c) in enumerate(zip(widths[:-1], widths[1:])):
            for key, shape in ((f"{net}_W{k}", (a, c)), (f"{net}_b{k}", (c,))):
                if key not in arrays:
                    raise InputError(src, f"member {key!r} is missing: an incomplete DL2 policy")
                w = arrays[key]
                if w.shape != shape:
                    raise InputError(src, f"member {key!r}: shape {w.shape}, the layout needs {shape}")
                if w.dtype.kind != "f":
                    raise InputError(src, f"member {key!r}: expected real numbers, got {w.dtype}")
                if not np.all(np.isfinite(w)):
                    raise InputError(src, f"member {key!r}: NaN or infinite weights")
