"""The benchmark library's records (issue 53): the collection's shape, checksums,
recipes, and `bench verify` failing every tampered record, plan or recipe."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from schedopt.bench import COLLECTION, instance_checksum, load_collection, select, verify
from schedopt.bench.catalog import entries
from schedopt.bench.records import Collection, collection_dir, read_plan, write_collection, write_plan
from schedopt.bench.recipes import materialize
from schedopt.bench.verify import verify_record
from schedopt.checking import check
from schedopt.data import data_dir
from schedopt.errors import InputError

HAS_DATA = data_dir().is_dir()
#: small records of every set that need no data folder
TINY = ["optimus-8j-3s-t3-s1", "kit-quota-s1", "optimus-running-50j-50s-s1", "slaq-10j-1s-t4-s1",
        "dorm-table2-10j-5s-s1", "placement-10j-5s-t2-s1"]


@pytest.fixture(scope="module")
def coll() -> Collection:
    return load_collection()[0]


def record(coll: Collection, rid: str):
    return next(r for r in coll.records if r.id == rid)


def test_collection_covers_the_goals(coll: Collection) -> None:
    """At least 150 instances over 5 sets, up to 16,000 jobs, a third or more proven optimal,
    some open; a benchmark subset of about 50; every catalog entry has its record."""
    recs = coll.records
    assert coll.collection == COLLECTION
    assert [r.id for r in recs] == [e.id for e in entries()]
    assert len(recs) >= 150
    assert {r.set for r in recs} == {"allocation", "quality", "partition", "placement", "ps-assignment"}
    assert max(r.jobs for r in recs) == 16000
    assert sum(r.status == "optimal" for r in recs) >= len(recs) / 3
    assert any(r.status == "open" for r in recs)
    assert 40 <= sum(r.benchmark for r in recs) <= 60
    assert all(r.jobs <= 4000 for r in recs if r.benchmark)
    for r in recs:
        assert (collection_dir() / r.plan).is_file(), r.id
        if r.status == "optimal":
            assert r.bound is not None and r.gap is not None and r.gap <= 1e-4, r.id
        if r.status == "open" and r.bound is not None:
            assert (r.bound <= r.best_known) if r.sense == "min" else (r.bound >= r.best_known), r.id


def test_checksum_ignores_the_last_bits_and_sees_a_change() -> None:
    inst = materialize(entries()[0].recipe, "x")
    doc = inst.to_dict()
    base = instance_checksum(inst)
    from schedopt.instance import Instance

    doc["jobs"][0]["remaining_steps"] = doc["jobs"][0]["remaining_steps"] * (1 + 1e-15)
    assert instance_checksum(Instance.from_dict(doc)) == base
    doc["jobs"][0]["remaining_steps"] += 1.0
    assert instance_checksum(Instance.from_dict(doc)) != base


def test_recipes_are_deterministic_and_running_fits() -> None:
    entry = next(e for e in entries() if e.id == "optimus-running-50j-50s-s1")
    a, b = materialize(entry.recipe, entry.id), materialize(entry.recipe, entry.id)
    assert instance_checksum(a) == instance_checksum(b)
    running = [j for j in a.jobs if j.running]
    assert 10 <= len(running) <= 50
    load = sum(sum(n * a.vector(j.roles[role].demand) for role, n in j.running.items()) for j in running)
    assert (load <= 0.9 * a.capacity_total + 1e-9).all()
    jct = materialize(next(e for e in entries() if e.id == "optimus-jct-50j-12s-s1").recipe, "j")
    assert jct.policy is not None and jct.policy.objective == "jct_weighted_time"


@pytest.mark.parametrize("rid", TINY)
def test_tiny_records_replay(coll: Collection, rid: str) -> None:
    rec = record(coll, rid)
    row = verify_record(rec, collection_dir() / rec.plan)
    assert row.ok is True, row.reason
    inst = materialize(rec.recipe, rec.id)
    assert check(inst, read_plan(collection_dir() / rec.plan), strict=True) == []


def test_benchmark_subset_verifies() -> None:
    """Every record of the benchmark subset replays (those made from the data folder are
    skipped, saying so, when it is absent)."""
    rows = verify("benchmark")
    failed = [(r.id, r.reason) for r in rows if r.ok is False]
    assert not failed
    skipped = [r for r in rows if r.ok is None]
    if HAS_DATA:
        assert not skipped
    else:
        assert skipped and all("data folder" in (r.reason or "") for r in skipped)


@pytest.mark.slow
def test_full_collection_verifies() -> None:
    rows = verify("all")
    assert not [(r.id, r.reason) for r in rows if r.ok is False]


def _submission(tmp: Path, coll: Collection, rid: str, **changes) -> Path:
    """A submission folder holding ``rid``'s record with ``changes`` and its plan."""
    rec = record(coll, rid)
    folder = tmp / "sub"
    (folder / "plans").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(collection_dir() / rec.plan, folder / rec.plan)
    write_collection(folder, Collection(collection=coll.collection, created="now", records=[rec.model_copy(update=changes)]))
    return folder


@pytest.mark.parametrize("rid, change, expect", [
    ("optimus-8j-3s-t3-s1", {"best_known": 9000.0}, "best_known"),
    ("optimus-8j-3s-t3-s1", {"bound": 1.0}, "bound"),
    ("optimus-8j-3s-t3-s1", {"admitted": 3}, "admitted"),
    ("optimus-8j-3s-t3-s1", {"status": "open"}, "verified optimal"),
    ("optimus-8j-3s-t3-s1", {"checksum": "sha256:" + "0" * 64}, "checksum"),
    ("optimus-8j-3s-t3-s1", {"jobs": 9}, "jobs/servers"),
    ("slaq-10j-1s-t4-s1", {"objective": "other"}, "objective"),
    ("placement-10j-5s-t2-s1", {"status": "optimal"}, "status"),
    ("dorm-table2-10j-5s-s1", {"status": "infeasible"}, "infeasibility"),
])
def test_tampered_record_fails(tmp_path: Path, coll: Collection, rid: str, change: dict, expect: str) -> None:
    folder = _submission(tmp_path, coll, rid, **change)
    rows = verify(rid, submissions=[folder])
    assert rows[0].ok is False and expect in (rows[0].reason or ""), rows[0].reason


def test_tampered_recipe_fails(tmp_path: Path, coll: Collection) -> None:
    rec = record(coll, "optimus-8j-3s-t3-s1")
    folder = _submission(tmp_path, coll, rec.id, recipe=rec.recipe.model_copy(update={"seed": 7}))
    row = verify(rec.id, submissions=[folder])[0]
    assert row.ok is False and "checksum" in (row.reason or "")


@pytest.mark.parametrize("how", ["count", "bound", "certificate", "status"])
def test_tampered_plan_fails(tmp_path: Path, coll: Collection, how: str) -> None:
    rec = record(coll, "optimus-50j-12s-s1")
    folder = _submission(tmp_path, coll, rec.id)
    plan = read_plan(folder / rec.plan)
    if how == "count":
        job = next(iter(plan.allocation))
        plan.allocation[job] = {role: n + 5 for role, n in plan.allocation[job].items()}
    elif how == "bound":
        plan.objective.bound = plan.objective.value
        plan.objective.gap = 0.0
        plan.certificate.bound.prices = {k: 2 * v for k, v in (plan.certificate.bound.prices or {}).items()}
    elif how == "certificate":
        plan.certificate = None
    else:
        from schedopt.plan import Status

        plan.status = Status.HEURISTIC
    write_plan(folder / rec.plan, plan)
    row = verify(rec.id, submissions=[folder])[0]
    assert row.ok is False, how


def test_unreadable_records_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "records.json").write_text(json.dumps({"schema": "schedopt/bench-records@1", "collection": COLLECTION,
                                                      "created": "x", "records": [{"id": 3}]}))
    with pytest.raises(InputError, match="records.json"):
        verify("all", submissions=[tmp_path])
    with pytest.raises(InputError, match="unknown set"):
        select("allocaton")


def test_selection() -> None:
    assert {r.set for r in select("quality:benchmark").records} == {"quality"}
    assert all(r.benchmark for r in select("quality:benchmark").records)
    both = select("slaq-10j-1s-t4-s1,kit-quota-s1").records
    assert [r.id for r in both] == ["kit-quota-s1", "slaq-10j-1s-t4-s1"]  # collection order


def test_docs_summary_table_is_the_records(coll: Collection) -> None:
    """docs/benchmarks.md's schedlib table (benchmarks/results/schedlib.json) counts the records as they are."""
    from schedopt.bench.build import SUMMARY_COLUMNS, summary_rows

    stored = json.loads((Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "schedlib.json").read_text())
    assert stored["columns"] == SUMMARY_COLUMNS
    assert stored["rows"] == summary_rows(coll)


def test_readme_figures_are_the_records(coll: Collection) -> None:
    """README's benchmark-library row states the collection's counts."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| benchmark library"))
    assert f"{len(coll.records)} instances in five sets" in row
    assert f"a benchmark subset of {sum(r.benchmark for r in coll.records)}" in row
    assert f"up to {max(r.jobs for r in coll.records):,} jobs" in row
