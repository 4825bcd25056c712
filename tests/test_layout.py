"""One home per concept (issue 33 §6): the layout rules the code keeps."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING
import re
from pathlib import Path

if TYPE_CHECKING:
    import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "schedopt"


def sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE)): p.read_text() for p in PACKAGE.rglob("*.py")}


def test_only_backends_lp_drives_highspy() -> None:
    users = sorted(name for name, text in sources().items()
                   if re.search(r"^\s*import highspy|load\(\"highspy\"", text, re.M))
    assert users == ["backends/lp.py"]


def test_core_registry_does_not_import_placement() -> None:
    text = (PACKAGE / "registry.py").read_text()
    assert "schedopt.placement" not in text


def test_heuristic_plans_are_built_in_the_plans_module() -> None:
    found = sorted(name for name, text in sources().items() if "def heuristic_plan(" in text)
    assert found == ["allocation/plans.py"]


#: the checker side (issue 48 §4): the checkers, the certificate replays and their dispatch
CHECKER_SIDE = ("schedopt.checking", "schedopt.certification")
#: third-party solver libraries a checker-side module may not load
#: (scipy.optimize is not one here: the speed and loss fits use its least squares, no solve does)
SOLVER_LIBRARIES = ("pyomo", "highspy", "ortools")


def module_files() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def imported(module: str, files: dict[str, Path]) -> set[str]:
    """The modules ``module`` imports anywhere in its body (inside functions too), with the
    packages Python runs on the way (``a.b.c`` runs ``a`` and ``a.b``); third-party names kept."""
    path = files[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([node.module] if node.module else []))
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in files)
    out: set[str] = set()
    for name in found:
        parts = name.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
    return {n for n in out if n in files or not n.startswith("schedopt")}


def solver_modules(files: dict[str, Path]) -> set[str]:
    """Modules that solve: those that register solvers (each problem's ``solver_modules`` and the
    extensions), the backends that drive HiGHS and CP-SAT, the public API (``solve``), and
    whatever loads a solver library. The registry and ``backends.deps`` (which names what is
    installed) solve nothing."""
    from schedopt.problems import BUILTIN_EXTENSION_MODULES, problems

    out = {m for p in problems() for m in p.solver_modules} | set(BUILTIN_EXTENSION_MODULES)
    out |= {m for m in files if m.startswith("schedopt.backends.") and m != "schedopt.backends.deps"} | {"schedopt.api"}
    out |= {m for m in files if any(lib == n or n.startswith(lib + ".") for n in imported(m, files)
                                    for lib in SOLVER_LIBRARIES)}
    return out


def checker_side(files: dict[str, Path]) -> list[str]:
    return [*CHECKER_SIDE, *(m for m in files if m.endswith((".checker", ".certificates")))]


def test_checker_side_never_imports_a_solver() -> None:
    """Issue 48 §4: following every import (inside functions too, and the packages each runs)
    from the checkers and the certificate replays reaches no module that solves."""
    files = module_files()
    banned = solver_modules(files)
    via: dict[str, str] = {}
    starts = checker_side(files)
    stack = list(starts)
    seen: set[str] = set()
    while stack:
        module = stack.pop()
        if module in seen or module not in files:
            continue
        seen.add(module)
        for dep in imported(module, files):
            via.setdefault(dep, module)
            stack.append(dep)
    reached = sorted(seen & banned)

    def chain(m: str) -> str:
        path = [m]
        while path[-1] in via and path[-1] not in starts:
            path.append(via[path[-1]])
        return " <- ".join(path)

    assert not reached, "the checker side reaches solver code:\n" + "\n".join(chain(m) for m in reached)


def test_checking_a_plan_loads_no_solver() -> None:
    """At run time too: checking a plan in a fresh interpreter imports no solver module nor library."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from schedopt.checking import check\n"
        "from schedopt.instance import load_instance\n"
        "from schedopt.plan import Plan\n"
        f"inst = load_instance({str(PACKAGE.parent / 'instances' / 'optimus-testbed.yaml')!r})\n"
        "plan = Plan(instance=inst.name, solver='none', status='heuristic', termination='completed',\n"
        "            objective={'name': 'total_remaining_time', 'value': 0.0}, solve_seconds=0.0,\n"
        "            paused=[j.id for j in inst.jobs])\n"
        "check(inst, plan)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = set(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split())
    banned = solver_modules(module_files())
    bad = sorted(m for m in loaded if m in banned or m.split(".")[0] in ("pyomo", "highspy", "ortools"))
    assert not bad, bad


def import_graph() -> "nx.DiGraph":
    """Module -> module it imports (anywhere in its body), without the edges to the module's own
    packages (Python runs ``a/__init__`` before ``a.b`` whatever ``a.b`` says)."""
    import networkx as nx

    files = module_files()
    graph = nx.DiGraph()
    for module in files:
        graph.add_node(module)
        for dep in imported(module, files):
            if dep in files and dep != module and not module.startswith(dep + "."):
                graph.add_edge(module, dep)
    return graph


def test_no_import_cycle_counting_imports_inside_functions() -> None:
    """Issue 49 §2: kernels below the solvers that call them, nothing calls upward; an import
    deferred into a function still counts (it hid the 14-module cycle among allocation's modules)."""
    import networkx as nx

    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert not cycles, cycles


def test_no_private_name_crosses_modules() -> None:
    """A ``_name`` is its module's own: another module that needs it gets a public name."""
    crossing = []
    for module, path in module_files().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("schedopt"):
                crossing += [f"{module} imports {node.module}.{a.name}" for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__")]
    assert not crossing, crossing


def test_allocation_solver_classes_sit_above_their_kernels() -> None:
    """Issue 49 §2: the registered classes of Optimus's model live in ``allocation/solvers.py``;
    the kernels (greedy, backends, price-guided steps, drivers) register nothing."""
    kernels = ("greedy.py", "milp.py", "cpsat.py", "price_guided.py", "exact.py", "typed.py", "stage.py")
    for name in kernels:
        assert "@register(" not in (PACKAGE / "allocation" / name).read_text(), name
    assert not any(f"schedopt.allocation.solvers" in imported(m, module_files())
                   for m in module_files() if m != "schedopt.allocation.solvers")


#: where a small literal is data, not a tolerance: instance generators' parameter ranges and the
#: learner's optimiser constants (Adam's eps, advantage normalisation)
LITERALS_ALLOWED = ("tolerances.py", "families.py", "learn/")
#: a measured cost in seconds (``FINISH_SECONDS_PER_JOB = 2.0e-5``) is a figure, not a tolerance
MEASURED_COST = re.compile(r"\s*\w*(SECONDS|seconds)\w*\s*(: float)?\s*=")


def test_tolerances_are_named_in_one_place() -> None:
    """Issue 49 §3: no solver, checker or simulator writes a tolerance inline (a float literal
    below 1e-3); each is named in ``schedopt/tolerances.py`` and imported from there."""
    import io
    import tokenize

    found = []
    for name, text in sources().items():
        if name.startswith(LITERALS_ALLOWED) or name.endswith(LITERALS_ALLOWED):
            continue
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NUMBER and not tok.string.lower().endswith("j"):
                value = float(tok.string.replace("_", "")) if any(c in tok.string.lower() for c in ".e") else 1.0
                if 0 < value < 1e-3 and not MEASURED_COST.match(tok.line):
                    found.append(f"{name}:{tok.start[0]}: {tok.line.strip()}")
    assert not found, "inline tolerances:\n" + "\n".join(found)


def test_readme_layout_lists_every_module() -> None:
    """Issue 49 §6: README's Layout names every module of the package, in its folder's lines
    (the command-line verbs' modules are summed up as one per verb group)."""
    text = (PACKAGE.parent / "README.md").read_text()
    block = text[text.index("## Layout"):]
    block = block[block.index("```") + 3:]
    block = block[:block.index("```")]
    folders: dict[str, str] = {}
    current = ""
    for line in block.splitlines():
        head = line[:21].strip()
        if head:
            current = head
        folders[current] = folders.get(current, "") + " " + line[21:] + " " + line
    missing = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent)
        folder = str(rel.parent) + "/"
        if path.name == "__init__.py" or folder == "schedopt/cli/":
            continue
        if not re.search(rf"(?<![\w/]){re.escape(path.name)}", folders.get(folder, "")):
            missing.append(str(rel))
    assert not missing, missing


def test_one_clock() -> None:
    """Issue 49 §3: every time-limited driver and search reads ``schedopt.deadline.Deadline``; none
    keeps a hand-made clock (a deadline compared with ``perf_counter``, ``time_limit`` less the time spent)."""
    hand_made = re.compile(r"perf_counter\(\)\s*[<>]|[<>]=?\s*time\.perf_counter\(\)|time_limit\s*-\s*\(time\.perf_counter"
                           r"|[+]\s*time_limit\b")
    found = [f"{name}: {line.strip()}" for name, text in sources().items()
             if name != "deadline.py" and not name.startswith("backends/")
             for line in text.splitlines() if hand_made.search(line)]
    assert not found, found


def test_nothing_calls_upward_into_the_api() -> None:
    """Issue 49 §2: problem packages and the core below the API never import ``schedopt.api``
    (the quota what-if, which solves twice, is API-level: ``schedopt/whatif.py``)."""
    files = module_files()
    below = [m for m in files if m.split(".")[1:2] and m.split(".")[1] in ("allocation", "quality", "partition", "placement", "backends")
             or m in ("schedopt.checking", "schedopt.certification", "schedopt.problems", "schedopt.registry",
                      "schedopt.instance", "schedopt.plan")]
    upward = [m for m in below if "schedopt.api" in imported(m, files)]
    assert not upward, upward


def test_no_module_tests_a_speed_forms_class() -> None:
    """Issue 49 §4: the speed forms answer for themselves (``measured``, ``closed_form``,
    ``price_kind``, ``scaled``, ``transfer_term_s``, ``fit_form``): no isinstance on a form outside speed.py."""
    forms = r"(TableSpeed|OptimusSync|OptimusAsync|Amdahl|FORMULA_FORMS)"
    pattern = re.compile(rf"isinstance\([^)]*\b{forms}\b|issubclass\([^)]*\b{forms}\b")
    found = [f"{name}: {line.strip()}" for name, text in sources().items() if name != "speed.py"
             for line in text.splitlines() if pattern.search(line)]
    assert not found, found
