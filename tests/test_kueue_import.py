"""Kueue and Kubeflow manifests as instances (issue 39 §2): every example in
../shared/data/kueue/examples imports (with its set-up), or fails in one line naming
the unsupported field; quantities parse exactly; plans on them check."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

import schedopt
from schedopt.cli import app
from schedopt.kueue_import import import_kueue, parse_quantity
from tests.conftest import SHARED_DATA, assert_checked

EXAMPLES = SHARED_DATA / "kueue" / "examples"
SETUP = {"jobs": "admin/single-clusterqueue-setup.yaml", "getting-started": "getting-started/quick-start-setup.yaml",
         "admission-fs": "admission-fs/admission-fair-sharing-setup.yaml", "admin": "admin/shared-quota-setup.yaml"}
#: the examples the model cannot state, and the field the one-line refusal names
REFUSED = {"jobs/sample-jobset.yaml": "spec.replicatedJobs",
           # admission fair sharing: not modelled, refused (its jobs come with its set-up)
           **{f"admission-fs/{f}": "spec.admissionScope" for f in ("admission-fair-sharing-setup.yaml",
                                                                  "lq-a-simple-job.yaml", "lq-b-simple-job.yaml")}}


def _examples() -> list[str]:
    if not EXAMPLES.is_dir():
        return []
    return sorted(str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.yaml"))


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="needs ../shared/data/kueue (Kueue's examples, not redistributed)")
@pytest.mark.parametrize("example", _examples())
def test_every_example_imports_or_is_refused_in_one_line(example: str, tmp_path: Path) -> None:
    files = [EXAMPLES / example]
    setup = SETUP[example.split("/")[0]]
    if "job" in example and example != setup:
        files.insert(0, EXAMPLES / setup)
    out = tmp_path / "instance.yaml"
    res = CliRunner().invoke(app, ["import", "kueue", *map(str, files), "--out", str(out)])
    if example in REFUSED:
        assert res.exit_code == 2 and not out.exists()
        assert REFUSED[example] in res.output and "Traceback" not in res.output
        return
    assert res.exit_code == 0, res.output
    inst = schedopt.load_instance(out)
    if inst.jobs:
        for solver in ["kueue-admission", "optimus-greedy", "optimus-milp"]:
            assert_checked(inst, schedopt.solve(inst, solver))


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="needs ../shared/data/kueue (Kueue's examples, not redistributed)")
def test_tfjob_is_a_ps_worker_job_and_partial_admission_sets_the_minimum() -> None:
    inst = import_kueue([EXAMPLES / "admin/single-clusterqueue-setup.yaml", EXAMPLES / "jobs/sample-tfjob.yaml",
                         EXAMPLES / "jobs/sample-job-partial-admission.yaml"])
    tf = inst.jobs[inst.job_index["tensorflow-dist-mnist"]]
    assert set(tf.roles) == {"ps", "worker"} and tf.roles["worker"].max_count == 2 and tf.queue == "cluster-queue"
    partial = inst.jobs[inst.job_index["sample-job-partial-admission"]]
    assert (partial.roles["worker"].min, partial.roles["worker"].max_count) == (5, 20)
    assert partial.roles["worker"].demand == {"cpu": 1.0, "memory": pytest.approx(200 / 1024)}
    queue = inst.queues[0]
    assert queue.quotas["default-flavor"]["memory"].nominal == 36.0  # 36Gi, in GiB
    plan = assert_checked(inst, schedopt.solve(inst, "kueue-admission"))
    assert plan.allocation["sample-job-partial-admission"]["worker"] < 20  # 9 CPUs of quota: admitted partially


@pytest.mark.parametrize("text,value", [("500m", Fraction(1, 2)), ("36Gi", 36 * 2**30), ("1e3", 1000), ("2k", 2000),
                                        (4, 4), ("0.5", Fraction(1, 2)), ("100Mi", 100 * 2**20)])
def test_quantities_parse_exactly(text: object, value: Fraction) -> None:
    assert parse_quantity(text, "q") == value


@pytest.mark.parametrize("bad", ["12x", "", "Gi", True, "1.2.3"])
def test_bad_quantities_name_the_field(bad: object) -> None:
    with pytest.raises(schedopt.InputError, match="field.path"):
        parse_quantity(bad, "field.path")


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="needs ../shared/data/kueue (Kueue's examples, not redistributed)")
def test_export_kueue_writes_workloads_that_reimport(tmp_path: Path) -> None:
    """import kueue -> solve -> export kueue: the Workloads read back as the same jobs and counts."""
    inst_path, plan_path, out = tmp_path / "cluster.yaml", tmp_path / "plan.yaml", tmp_path / "workloads.yaml"
    files = [EXAMPLES / "admin/single-clusterqueue-setup.yaml", EXAMPLES / "jobs/sample-job-partial-admission.yaml"]
    assert CliRunner().invoke(app, ["import", "kueue", *map(str, files), "--out", str(inst_path)]).exit_code == 0
    assert CliRunner().invoke(app, ["solve", str(inst_path), "--solver", "kueue-admission", "--out", str(plan_path)]).exit_code == 0
    res = CliRunner().invoke(app, ["export", "kueue", str(inst_path), str(plan_path), "--out", str(out)])
    assert res.exit_code == 0, res.output
    plan = schedopt.load_plan(plan_path)
    inst = schedopt.load_instance(inst_path)
    back = import_kueue([EXAMPLES / "admin/single-clusterqueue-setup.yaml", out])
    # the same jobs (their requests), admitted (running at the plan's counts) on the plan's flavors
    assert {j.id: j.roles["worker"].max_count for j in back.jobs} == {
        j: inst.jobs[inst.job_index[j]].roles["worker"].max_count for j in plan.allocation}
    assert {j.id: j.running for j in back.jobs} == plan.allocation
    assert {j.id: j.running_accelerator for j in back.jobs} == plan.accelerators
    assert back.jobs[0].roles["worker"].demand["memory"] == pytest.approx(200 / 1024)  # 200Mi, exactly back
    again = assert_checked(back, schedopt.solve(back, "kueue-admission"))
    assert again.allocation == plan.allocation  # admitted work stays admitted
    bad = CliRunner().invoke(app, ["export", "kueue", str(inst_path), str(plan_path), "--out", str(tmp_path / "w.json")])
    assert bad.exit_code == 2 and not (tmp_path / "w.json").exists()
