"""Where each job's tasks run (problem ``placement``, Optimus §4.2, DLTAP) and
which parameter server holds which parameter block (problem
``ps-assignment``, Optimus §5.3).

Everything about them lives here: ``contract`` (both problems' declarations),
``problem`` (T_j, cross-node pairs, metrics), ``checker``, ``families``
(``placement``, ``optimus-paa``), the solvers ``optimus`` (§4.2), ``kube``
(``kube-default``), ``dltap``, ``milp``, ``cpsat`` with the two-stage ``exact``
driver, ``paa`` (``paa``, ``mxnet-default``) and ``joint`` (``ALLOC+PLACE`` solves).
"""
