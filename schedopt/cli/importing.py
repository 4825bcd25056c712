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
                                                 "Cohort, LocalQueue, Node; Job, TFJob, PyTorchJob, MPIJob, JobSet, Workload"),
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
