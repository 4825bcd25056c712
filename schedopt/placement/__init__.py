"""Placement problems. So far: parameter assignment to parameter servers
(problem ``ps-assignment``, Optimus §5.3): ``paa`` and ``mxnet-default``.
Importing this package registers them."""

from schedopt.placement import paa  # noqa: F401  (registration)
