"""``import kueue``: Kueue and Kubeflow manifests as an instance (docs/kubernetes.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from schedopt.cli.common import app, check_out_path, handles_bad_input, out
from schedopt.instance import save_instance

importer = typer.Typer(help="Instances from other systems' files.", no_args_is_help=True)
app.add_typer(importer, name="import")


@importer.command("kueue")
@handles_bad_input
def kueue(
    files: list[Path] = typer.Argument(..., help="manifests (.yaml, several documents each): ResourceFlavor, ClusterQueue, "
                                                 "Cohort, LocalQueue, Node, Kueue's Configuration; Job, TFJob, PyTorchJob, MPIJob, JobSet, Workload"),
    out_path: Path = typer.Option(..., "--out", help="instance file to write (.yaml/.json)"),
    name: str = typer.Option("kueue", "--name", help="instance name"),
) -> None:
    """Turn Kueue's queues, flavors and the jobs submitted to them into one instance."""
    from schedopt.kueue_import import import_kueue

    check_out_path(out_path)
    instance = import_kueue(list(files), name=name)
    save_instance(instance, out_path)
    out.print(f"wrote {out_path}: {len(instance.jobs)} jobs, {len(instance.queues or [])} queues, "
              f"{len(instance.server_names)} servers ({', '.join(instance.flavors)})")


exporter = typer.Typer(help="Plans as other systems' records.", no_args_is_help=True)
app.add_typer(exporter, name="export")


@exporter.command("kueue")
@handles_bad_input
def export_kueue(
    instance_path: Path = typer.Argument(..., help="the instance the plan answers (.yaml/.json)"),
    plan_path: Path = typer.Argument(..., help="an allocation plan (.yaml/.json)"),
    out_path: Path = typer.Option(..., "--out", help="Workload manifests to write (.yaml, one document each)"),
    pending: bool = typer.Option(False, "--pending", help="also each job the plan leaves pending, with condition "
                                                        "QuotaReserved False and why (the plan's metrics.pending)"),
) -> None:
    """Write each admitted job as a Kueue Workload with the status.admission Kueue would record
    (with --pending, the pending ones too, saying why)."""
    import yaml

    from schedopt.allocation.kueue import workload_admissions
    from schedopt.errors import InputError
    from schedopt.instance import load_instance
    from schedopt.plan import load_plan

    check_out_path(out_path)
    if out_path.suffix.lower() not in (".yaml", ".yml"):
        raise InputError(str(out_path), "--out: Workload manifests are written as YAML (.yaml)")
    instance, plan = load_instance(instance_path), load_plan(plan_path)
    if plan.problem != "allocation":
        raise InputError(str(plan_path), f'problem: a {plan.problem} plan; Workload admissions come from allocation plans')
    unknown = sorted(set(plan.allocation) - set(instance.job_index))
    if unknown:
        raise InputError(str(plan_path), f"allocation: jobs {unknown[:5]} are not in {instance_path}")
    from schedopt.checking import check

    violations = check(instance, plan)
    if violations:
        raise InputError(str(plan_path), f"the plan fails check ({violations[0]}; {len(violations)} in all): "
                                         "Kueue would not have admitted it")
    workloads = workload_admissions(instance, plan, pending=pending)
    out_path.write_text(yaml.safe_dump_all(workloads, sort_keys=False))
    waiting = sum(1 for w in workloads if "admission" not in w["status"])
    out.print(f"wrote {out_path}: {len(workloads)} Workloads" + (f" ({waiting} pending)" if pending else ""))
