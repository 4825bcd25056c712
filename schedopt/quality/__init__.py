"""SLAQ's quality-driven allocation (SLAQ §2): ``contract`` (the problem's
declaration), ``problem`` (data, the predicted-reduction term), ``checker``,
``families`` (``generate slaq``), ``greedy`` (``slaq-greedy``) and ``exact``
(``slaq-milp``, ``slaq-cpsat``)."""

from schedopt.quality.problem import QualityData, compile_quality, predicted_reduction

__all__ = ["QualityData", "compile_quality", "predicted_reduction"]
