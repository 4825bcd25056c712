"""``generate``: an instance of any registered family."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from typer.core import TyperCommand

from schedopt.cli.common import app, check_out_path, handles_bad_input, out
from schedopt.instance import save_instance


class FamiliesHelp(TyperCommand):
    """``generate --help`` ends with the registered families, one line each (found
    when help is asked for, so other commands do not pay for the discovery)."""

    def format_help(self, ctx, formatter) -> None:  # type: ignore[no-untyped-def]
        from schedopt.problems import families

        lines = [f"{name}: {problem}" + (f", {fam.description}" if fam.description else "")
                 for name, (problem, fam) in sorted(families().items())]
        self.epilog = "Families:\n\n" + "\n\n".join(lines)
        super().format_help(ctx, formatter)


@app.command(cls=FamiliesHelp)
@handles_bad_input
def generate(
    family: str = typer.Argument(..., help="instance family; `schedopt generate --help` lists them"),
    jobs: int = typer.Option(..., "--jobs", min=0),
    servers: int = typer.Option(..., "--servers", min=1),
    seed: int = typer.Option(0, "--seed"),
    out_path: Path = typer.Option(..., "--out", help="instance file to write (.yaml/.json)"),
    max_tasks: int = typer.Option(32, "--max-tasks", min=1, help="max PS and max workers per job"),
    name: Optional[str] = typer.Option(None, "--name", help="instance name (default: from family and sizes)"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="shared data folder (traces/, measured/); default $SCHEDOPT_DATA_DIR, else ../shared/data"),
) -> None:
    """Generate an instance of FAMILY, deterministic in --seed."""
    from schedopt.generate import generate_instance

    check_out_path(out_path)
    instance = generate_instance(family, jobs=jobs, servers=servers, seed=seed, max_tasks=max_tasks, name=name,
                                 data_dir=data_dir)
    save_instance(instance, out_path)
    out.print(f"wrote {out_path}: {len(instance.jobs)} jobs, {len(instance.server_names)} servers")


