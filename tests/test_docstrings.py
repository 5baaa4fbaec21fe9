"""Every public function, class and method has a docstring (issue 27: docstrings on public definitions).

Public: a module-level function or class whose name does not start with "_", and a method not starting with "_" of
any module-level class (a private class's methods are the interface its module uses). Dunder methods are exempt:
their meaning is Python's. ``to_dict`` is not: its docstring says which JSON contract the dict is."""

from __future__ import annotations

import ast
from pathlib import Path

import aiinfra

SRC = Path(aiinfra.__file__).parent
#: public definitions still without a docstring (the analytic, reliability and validation models, the inference
#: planner, the loaded-replica model and the simulator's runner); an entry leaves this list when it gains one
PENDING = {
    "analytic/comms.py::CommTime",
    "analytic/efficiency.py::Curve",
    "analytic/efficiency.py::Curve.at",
    "analytic/efficiency.py::EfficiencyTable",
    "analytic/efficiency.py::EfficiencyTable.lookup",
    "analytic/inference.py::InferenceModel.iteration_time_s",
    "analytic/inference.py::InferenceModel.weight_bytes_per_accelerator",
    "analytic/inference.py::InferenceModel.weight_bytes_per_replica",
    "analytic/inference.py::StepBreakdown",
    "analytic/inference.py::_Kernels.time_s",
    "analytic/model_figures.py::ParamBreakdown.layers_active",
    "analytic/model_figures.py::ParamBreakdown.layers_total",
    "analytic/model_figures.py::ParamBreakdown.moe_routed_active_per_layer",
    "analytic/model_figures.py::ParamBreakdown.total",
    "analytic/model_figures.py::param_breakdown",
    "analytic/model_figures.py::params_active",
    "analytic/model_figures.py::params_total",
    "analytic/step_time.py::FixedStepTime.iteration_time_s",
    "analytic/step_time.py::StepBatch.decode",
    "analytic/step_time.py::StepBatch.prefill",
    "analytic/step_time.py::StepBatch.tokens",
    "analytic/training_memory.py::PlanArrays.take",
    "analytic/training_memory.py::TrainSetup.frozen_base",
    "analytic/training_memory.py::TrainSetup.params",
    "analytic/training_step.py::StepArrays",
    "planning/inference.py::InferenceEstimate",
    "planning/inference.py::KvCapacity",
    "planning/inference.py::estimate_inference",
    "planning/loaded.py::ReplicaState.response_s",
    "reliability/goodput.py::Downtime.mean_s",
    "reliability/goodput.py::SpareChoice",
    "reliability/plan.py::ReliabilityReport",
    "reliability/rates.py::ReliabilityTable.accelerator",
    "reliability/rates.py::ReliabilityTable.cached",
    "reliability/validation.py::Scored",
    "reliability/validation.py::markdown",
    "sim/run.py::SimResult",
    "sim/run.py::SpeculativeStep.iteration_time_s",
    "validation/benchmark_rows.py::is_mlperf",
    "validation/report.py::markdown",
    "validation/rows.py::integer",
    "validation/rows.py::num",
    "validation/runner.py::Case",
    "validation/runner.py::by_group",
    "validation/runner.py::read_cases",
    "validation/runner.py::summarise",
    "validation/switches.py::columns_for",
    "validation/switches.py::flag",
    "validation/types.py::RowTables.benchmark",
    "validation/types.py::RowTables.engine",
}

_DEFS = ast.FunctionDef | ast.AsyncFunctionDef


def _public_definitions() -> dict[str, bool]:
    """``path::name`` (``path::Class.method`` for a method) -> whether it has a docstring."""
    out: dict[str, bool] = {}

    def add(key: str, node: ast.AST) -> None:
        assert isinstance(node, _DEFS | ast.ClassDef)
        out[key] = out.get(key, True) and ast.get_docstring(node) is not None  # a redefinition must have one too

    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, _DEFS | ast.ClassDef) and not node.name.startswith("_"):
                add(f"{rel}::{node.name}", node)
            if isinstance(node, ast.ClassDef):
                for sub in node.body:
                    if isinstance(sub, _DEFS) and not sub.name.startswith("_"):
                        add(f"{rel}::{node.name}.{sub.name}", sub)
    return out


def test_every_public_definition_has_a_docstring() -> None:
    missing = sorted(k for k, documented in _public_definitions().items() if not documented and k not in PENDING)
    assert missing == [], f"say what these do (and return, with units) in a docstring: {missing}"


def test_pending_only_shrinks() -> None:
    defs = _public_definitions()
    done = sorted(k for k in PENDING if defs.get(k, True))
    assert done == [], f"documented or gone: remove these from PENDING: {done}"
