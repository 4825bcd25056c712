"""Materialise a record's instance from its recipe, deterministic in the seed.

A recipe is a ``schedopt generate`` family or a testing-kit function, then
transforms on the instance's document:

- ``objective: NAME`` sets ``policy.objective`` (e.g. ``jct_weighted_time``, the
  average-JCT objective);
- ``running: {share, restart_max_s}`` makes about ``share`` of the jobs run now
  (``running`` counts at their role minimum, one or two more), taken in a random
  order while their demand fits in 90 % of the cluster, each losing a whole number
  of seconds in [0, ``restart_max_s``] when its counts change (``restart_s``).

Instances built from the shared data folder are made at run time (they are not
ours to redistribute) and matched to their record by :func:`instance_checksum`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from schedopt.bench.records import Recipe, Record, instance_checksum
from schedopt.errors import InputError
from schedopt.instance import Instance

#: testing-kit functions a recipe may name (schedopt.testing.instances)
KIT_FUNCTIONS = ("random_tiny_instance", "random_typed_instance", "random_quota_instance",
                 "random_restart_instance", "random_objective_instance", "random_packing_instance")
#: share of the cluster's capacity the running jobs of the ``running`` transform may use
RUNNING_CAPACITY_SHARE = 0.9


class MissingData(Exception):
    """The recipe reads the shared data folder and it is not there."""


def materialize(recipe: Recipe, name: str, data_dir: str | Path | None = None) -> Instance:
    """The instance ``recipe`` makes, called ``name``. Raises :class:`MissingData`
    when the recipe reads the data folder and it is absent."""
    from schedopt.data import data_dir as resolve_data_dir

    if recipe.data:
        folder = resolve_data_dir(data_dir)
        if not folder.is_dir():
            raise MissingData(f"needs the shared data folder ({folder} not found; pass --data-dir)")
    if recipe.kit is not None:
        instance = _from_kit(recipe)
    else:
        from schedopt.generate import generate_instance

        assert recipe.family is not None and recipe.jobs is not None and recipe.servers is not None
        instance = generate_instance(recipe.family, jobs=recipe.jobs, servers=recipe.servers, seed=recipe.seed,
                                     max_tasks=recipe.max_tasks, name=name, data_dir=data_dir)
    doc = instance.to_dict()
    doc["name"] = name
    for key, value in recipe.transforms.items():
        TRANSFORMS[key](doc, value, recipe.seed)
    return Instance.from_dict(doc, source=f"bench recipe {name}")


def _from_kit(recipe: Recipe) -> Instance:
    if recipe.kit not in KIT_FUNCTIONS:
        raise InputError("recipe.kit", f'unknown kit function "{recipe.kit}"; known: {", ".join(KIT_FUNCTIONS)}')
    from schedopt.testing import instances as kit

    return getattr(kit, recipe.kit)(recipe.seed)


def _objective(doc: dict[str, Any], value: Any, seed: int) -> None:
    doc["policy"] = {**(doc.get("policy") or {}), "objective": str(value)}


def _running(doc: dict[str, Any], value: Any, seed: int) -> None:
    share = float(value.get("share", 0.67))
    restart_max = int(value.get("restart_max_s", 400))
    rng = np.random.default_rng([seed, 17])
    resources = doc["resources"]
    capacity = np.zeros(len(resources))
    for srv in doc["servers"]:
        capacity += srv.get("count", 1) * np.array([srv["capacity"].get(r, 0.0) for r in resources])
    room = RUNNING_CAPACITY_SHARE * capacity
    used = np.zeros(len(resources))
    for j in rng.permutation(len(doc["jobs"])):
        job = doc["jobs"][int(j)]
        draw = rng.random()
        extra = rng.integers(0, 3, size=len(job["roles"]))
        restart = float(rng.integers(0, restart_max + 1))
        if draw >= share:
            continue
        counts = {name: int(min(role["max"], role["min"] + e)) for (name, role), e in zip(job["roles"].items(), extra)}
        demand = sum(n * np.array([job["roles"][name]["demand"].get(r, 0.0) for r in resources]) for name, n in counts.items())
        if np.any(used + demand > room):
            continue
        used += demand
        job["running"] = counts
        job["restart_s"] = restart


TRANSFORMS = {"objective": _objective, "running": _running}


def check_record_instance(record: Record, instance: Instance) -> str | None:
    """Why ``instance`` is not the one ``record`` names (None: it is)."""
    got = instance_checksum(instance)
    if got != record.checksum:
        return f"the materialised instance differs from the record (checksum {got[:19]}..., recorded {record.checksum[:19]}...)"
    return None
