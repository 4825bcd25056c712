"""``what-if quota``: what changing one queue's nominal quota would change (docs/kubernetes.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from schedopt.cli.common import app, check_format, fmt, handles_bad_input, out, print_json

what_if = typer.Typer(help="What a change to the instance would change.", no_args_is_help=True)
app.add_typer(what_if, name="what-if")


@what_if.command("quota")
@handles_bad_input
def quota(
    file: Path = typer.Argument(..., help="instance file with queues (.yaml/.json)"),
    queue: str = typer.Option(..., "--queue", help="the queue whose quota changes"),
    nominal: float = typer.Option(..., "--nominal", min=0.0, help="its new nominal quota"),
    resource: str = typer.Option("gpu", "--resource", help="the resource"),
    flavor: Optional[str] = typer.Option(None, "--flavor", help="the flavor (accelerator type); default: the cluster's only one"),
    solver: str = typer.Option("optimus-milp", "--solver", help="the allocation solver both plans come from"),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", min=0.0, help="seconds per solve"),
    seed: int = typer.Option(0, "--seed", min=0),
    format_: str = typer.Option("table", "--format", help="table or json"),
    grow_capacity: bool = typer.Option(False, "--grow-capacity", help="the flavor's servers change with the quota (a cluster "
                                                                     "imported from Kueue without Node objects: its capacity is the quotas')"),
) -> None:
    """Solve FILE as it is and with QUEUE's nominal quota of RESOURCE on FLAVOR set to NOMINAL;
    print both plans' admitted jobs, Σ remaining time, gap and each queue's usage."""
    from schedopt.whatif import quota_what_if
    from schedopt.errors import InputError
    from schedopt.instance import load_instance
    from schedopt.registry import solver_info

    as_json = check_format(format_) == "json"
    instance = load_instance(file)
    if not instance.queues:
        raise InputError(str(file), "queues: the instance has no queues, so there is no quota to change")
    if solver_info(solver).problem != "allocation":
        raise InputError("--solver", f'"{solver}" is not an allocation solver')
    if flavor is None:
        if len(instance.flavors) > 1:
            raise InputError("--flavor", f"the cluster has several flavors ({', '.join(instance.flavors)}); name one")
        flavor = instance.flavors[0]
    try:
        report = quota_what_if(instance, queue=queue, flavor=flavor, resource=resource, nominal=nominal,
                               solver=solver, time_limit=time_limit, seed=seed, grow_capacity=grow_capacity)
    except InputError as exc:
        if exc.source in ("queue", "flavor", "resource"):  # the option that named it
            raise InputError(f"--{exc.source}", exc.problems) from None
        raise
    sides = ("before", "after")
    if as_json:
        print_json({**{k: v for k, v in report.items() if k not in sides},
                    **{side: {k: v for k, v in report[side].items() if k != "plan"} for side in sides}})
        return
    key = f"{resource}@{flavor}"
    table = Table(title=f"{instance.name}: {queue}'s nominal {key} {fmt(report['nominal_before'])} -> "
                        f"{fmt(report['nominal_after'])} ({solver})")
    names = [q.name for q in instance.queues]
    for col in ["", "status", "admitted", "Σ remaining time (s)", "gap %", *[f"{n} {key}" for n in names]]:
        table.add_column(col, justify="left" if col in ("", "status") else "right")
    for side in sides:
        r = report[side]
        gap = "-" if r["gap"] is None else f"{100 * r['gap']:.3g}"
        table.add_row(side, r["status"], str(r["admitted"]), fmt(r["total_remaining_time_s"]), gap,
                      *[fmt(r["queue_usage"].get(n, {}).get(key, 0.0)) for n in names])
    out.print(table)
