"""The benchmark library (``schedlib``): curated instance sets with best known
values and replayable proofs, as MIPLIB is for MIP (docs/benchmarks.md, "The
benchmark library").

From Python::

    from schedopt import bench
    for item in bench.instances("benchmark"):          # records with their instances
        plan = my_solver(item.instance)
        print(item.record.id, bench.gap_to_record(plan, item.record).gap)
    result = bench.run("placement", "placement-lagrange", time_limit=10)
    rows = bench.verify("benchmark")                   # replay the stored best plans

``assert_record_gap`` is the testing kit's gap assertion against a record's
stored optimum instead of an exact solve.
"""

from __future__ import annotations

from schedopt.bench.library import (BENCHMARK, SETS, BenchInstance, RecordGap, gap_to_record, instances,
                                    record_instance, select)
from schedopt.bench.records import COLLECTION, Record, instance_checksum, load_collection
from schedopt.bench.report import report
from schedopt.bench.runner import RunResult, RunRow, run, shifted_geometric_mean
from schedopt.bench.verify import VerifyRow, verify
from schedopt.bench.assertions import assert_record_gap

__all__ = ["BENCHMARK", "COLLECTION", "SETS", "BenchInstance", "Record", "RecordGap", "RunResult", "RunRow",
           "VerifyRow", "assert_record_gap", "gap_to_record", "instance_checksum", "instances", "load_collection",
           "record_instance", "report", "run", "select", "shifted_geometric_mean", "verify"]
