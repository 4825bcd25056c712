"""Placement problems: where each job's tasks run (problem ``placement``,
Optimus §4.2: ``optimus-placement``) and which parameter server holds which
parameter block (problem ``ps-assignment``, Optimus §5.3: ``paa``,
``mxnet-default``). Importing this package registers them."""

from schedopt.placement import cpsat, dltap, kube, milp, optimus, paa  # noqa: F401  (registration)
