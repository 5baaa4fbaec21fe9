"""Benchmark result files -> measurements, the format detected from the content.

Serving (each gives the workload it ran — mean prompt and output lengths, a client concurrency or a request rate —
and the mean TTFT and TPOT it measured; TPOT excludes the first token, as the planner's does):

* vLLM ``vllm bench serve --save-result`` JSON (vllm/benchmarks/serve.py, ``save_to_pytorch_benchmark_format`` /
  the ``result_json`` it dumps): ``completed``, ``total_input_tokens``, ``total_output_tokens``, ``request_rate``
  (a number or ``"inf"``), ``max_concurrency`` (null when unbounded), ``mean_ttft_ms``, ``mean_tpot_ms`` (per
  request (latency − TTFT) / (output − 1)), ``median_*`` / ``p99_*`` percentiles, ``output_throughput``, ``date``
  (``%Y%m%d-%H%M%S``).
* SGLang ``sglang.bench_serving --output-file`` JSON Lines (sglang 0.5.7 ``bench_serving.py``: one object per run,
  appended, with the vLLM result's names: ``completed``, ``total_input_tokens``, ``total_output_tokens``,
  ``request_rate`` (``Infinity`` when unbounded), ``max_concurrency``, ``mean_ttft_ms``, ``mean_tpot_ms``,
  percentiles, ``output_throughput``), and ``server_info`` (the server's arguments: ``tp_size``, ``version``), which
  the calibration checks against the scenario. Both clients write ``input_lens`` (per request) with
  ``--output-details`` / ``--save-detailed``: two runs with the same varied lengths sent the same prompts.
* GuideLLM's benchmark report (JSON or YAML; guidellm/benchmark/schemas: ``benchmarks[i].config.strategy`` with
  ``type_`` synchronous | concurrent (``streams``) | constant | poisson (``rate``); ``benchmarks[i].metrics.<name>
  .successful.{mean, median, percentiles.p99}`` for ``time_to_first_token_ms``, ``inter_token_latency_ms`` (per
  request (last − first token) / (output − 1): vLLM's TPOT; GuideLLM's own ``time_per_output_token_ms`` counts the
  first token, so it is not used), ``prompt_token_count``, ``output_token_count``, ``output_tokens_per_second``).
* A plain CSV, one row per run: ``input_tokens, output_tokens, concurrency`` or ``request_rate``, ``ttft_s,
  tpot_s``, optional ``output_tokens_per_s`` and percentiles ``ttft_p50_s, ttft_p99_s, tpot_p50_s, tpot_p99_s``.

Training (measured step time of a layout):

* A CSV, one row per layout: ``tp, pp`` (optional ``dp, cp, ep, vp, microbatch_seqs, sharding, recompute``,
  ``global_batch_seqs, seq_len``) and ``step_time_s``.
* torchtitan's metric log lines (``step: N  loss: …  tps: T  tflops: …  mfu: M%``; torchtitan/components/
  metrics.py logs ``tps`` = tokens per second per accelerator): step time = global batch tokens / (tps × count).
* Megatron-LM's training log (``iteration N/ M | … | elapsed time per iteration (ms): T | … | global batch size:
  B |``; megatron/training/training.py ``training_log``).
  Both logs are the scenario's own layout (``training.plan``); the first logged step (compilation, warm-up) is
  left out and the median of the rest taken.

Every problem is a SpecError naming the file and the field; nothing is guessed.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import math
import re
import statistics
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from aiinfra.errors import SpecError
from aiinfra.specs.files import read_text
from aiinfra.specs.yaml_safe import load_yaml

MS = 1e-3


@dataclass(frozen=True, kw_only=True, slots=True)
class ServingResult:
    """One measured serving run."""

    file: str
    format: str
    label: str
    """Which run of the file (``concurrency 16``, ``row 3``)."""
    date: str | None
    input_tokens: int
    output_tokens: int
    concurrency: int | None = None
    request_rate_per_s: float | None = None
    batch: int | None = None
    """All requests sent at once (vLLM with an unbounded rate and no concurrency cap): a static batch."""
    ttft_s: float
    tpot_s: float
    output_tokens_per_s: float | None = None
    percentiles: dict[str, float] = field(default_factory=dict)
    """ttft_p50_s, ttft_p99_s, tpot_p50_s, tpot_p99_s where the file gives them (reported, not fitted)."""
    prompt_set: str | None = None
    """A digest of the run's per-request prompt lengths when the file lists them and they vary (``input_lens``):
    the clients draw them from their seed, so two runs with the same digest sent the same prompts (None: not
    listed, or every prompt the same length, which any seed gives)."""
    server_tp: int | None = None
    """The tensor-parallel size the server reports (SGLang's ``server_info.tp_size``; None: not reported)."""

    @property
    def load(self) -> str:
        """The run's load in words: its concurrency, its request rate, or the static batch sent at once."""
        if self.concurrency is not None:
            return f"concurrency {self.concurrency}"
        if self.request_rate_per_s is not None:
            return f"{self.request_rate_per_s:g} requests/s"
        return f"a batch of {self.batch} sent at once"


@dataclass(frozen=True, kw_only=True, slots=True)
class TrainingResult:
    """One measured training layout."""

    file: str
    format: str
    label: str
    date: str | None
    plan: dict[str, Any]
    """training.plan keys the file sets (empty: the scenario's own plan)."""
    job: dict[str, Any]
    """training keys the file sets (global_batch_seqs, seq_len)."""
    step_time_s: float | None
    """Measured seconds per step; None where the file gives tokens per second instead (torchtitan)."""
    tokens_per_s_per_accelerator: float | None = None
    """torchtitan's ``tps``: the step time follows from the scenario's batch tokens and accelerator count."""

    @property
    def load(self) -> str:
        """The layout the file sets, in words ("tp 4, pp 2"), or "the scenario's plan"."""
        return ", ".join(f"{k} {v}" for k, v in self.plan.items()) or "the scenario's plan"


Result = ServingResult | TrainingResult


def _err(path: Path, fld: str, value: Any, problem: str, fix: str) -> SpecError:
    return SpecError(f"{path.name}: {fld}", value, problem, fix)


def _number(path: Path, fld: str, value: Any, positive: bool = True, integer: bool = False) -> float:
    """A finite number (> 0 when ``positive``), or a SpecError naming the file and field."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            value = float(value.replace(",", "").strip())
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(float(value))
    if ok and positive:
        ok = float(value) > 0
    if ok and integer:
        ok = float(value) == int(float(value))
    if not ok:
        what = "a positive whole number" if integer else ("a positive number" if positive else "a number")
        raise _err(path, fld, value, f"must be {what}", "check the benchmark output; re-run it if it is truncated")
    return float(value)


def read(path_str: str) -> list[Result]:
    """Every measurement in one result file (format detected from its content)."""
    path = Path(path_str)
    text = read_text(path, "result file", "a benchmark result (vLLM JSON, GuideLLM report, CSV or a training log)")
    stripped = text.lstrip()
    if not stripped:
        raise _err(path, "(file)", "(empty)", "the file is empty", "give the benchmark's saved result")
    if "elapsed time per iteration (ms)" in text:
        return _megatron(path, text)
    if re.search(r"\bstep:\s*\d+", text) and "tps:" in text:
        return _torchtitan(path, text)
    if stripped[0] in "{[":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg == "Extra data":
                return _json_lines(path, text)
            raise _err(
                path, f"line {exc.lineno}", exc.msg, "not valid JSON", "give the file the benchmark saved"
            ) from None
        return _from_mapping(path, data)
    first = stripped.splitlines()[0]
    if "," in first and ("ttft_s" in first or "step_time_s" in first):
        return _csv(path, text)
    if "benchmarks:" in text:
        return _from_mapping(path, load_yaml(text, "result file", str(path)))
    raise _err(
        path,
        "(format)",
        first[:60],
        "not a format aiinfra calibrate reads",
        "give a vLLM --save-result JSON, an SGLang --output-file JSON Lines, a GuideLLM report, a CSV with "
        "ttft_s/tpot_s or step_time_s columns, "
        "or a torchtitan / Megatron-LM training log",
    )


def _json_lines(path: Path, text: str) -> list[Result]:
    """A JSON Lines file of serving runs, one object per line (sglang.bench_serving appends each run to its
    ``--output-file``); each run is labelled with its line."""
    out: list[Result] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise _err(path, f"line {number}", exc.msg, "not valid JSON", "give the file the benchmark saved") from None
        if not isinstance(data, dict) or "mean_ttft_ms" not in data:
            raise _err(
                path,
                f"line {number}",
                type(data).__name__,
                "a line of a JSON Lines result is one serving run (mean_ttft_ms, completed)",
                "give the file sglang.bench_serving --output-file wrote",
            )
        run = _serving_json(path, data)
        out.append(replace(run, label=f"line {number}: {run.label}"))
    return out


def _from_mapping(path: Path, data: Any) -> list[Result]:
    if isinstance(data, dict) and isinstance(data.get("benchmarks"), list):
        return list(_guidellm(path, data))
    if isinstance(data, dict) and ("mean_ttft_ms" in data or "completed" in data):
        return [_serving_json(path, data)]
    raise _err(
        path,
        "(format)",
        type(data).__name__,
        "neither a vLLM bench serve result (mean_ttft_ms, completed) nor a GuideLLM report (benchmarks)",
        "give the file the benchmark saved",
    )


def _iso_date(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    for fmt in ("%Y%m%d-%H%M%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"):
        try:
            return datetime.strptime(value[:19], fmt).date().isoformat()
        except ValueError:
            continue
    return None


# -- vLLM ------------------------------------------------------------------------------------------------------


def _serving_json(path: Path, d: dict[str, Any]) -> ServingResult:
    """One run of vLLM's or SGLang's serving benchmark (the two clients' result objects share their names; SGLang's
    adds ``server_info``)."""
    for key in ("completed", "total_input_tokens", "total_output_tokens", "mean_ttft_ms", "mean_tpot_ms"):
        if key not in d:
            raise _err(
                path,
                key,
                "(absent)",
                "a vLLM bench serve result holds it",
                "give the JSON `vllm bench serve --save-result` wrote",
            )
    completed = _number(path, "completed", d["completed"], integer=True)
    inp = _number(path, "total_input_tokens", d["total_input_tokens"]) / completed
    out = _number(path, "total_output_tokens", d["total_output_tokens"]) / completed
    if out < 2:
        raise _err(
            path,
            "total_output_tokens",
            d["total_output_tokens"],
            f"{out:.2f} output tokens per request leave no time per output token to measure",
            "benchmark with at least 2 output tokens",
        )
    n_prompts = d.get("num_prompts")
    if isinstance(n_prompts, int) and completed > n_prompts:
        raise _err(
            path,
            "completed",
            d["completed"],
            f"more than num_prompts = {n_prompts}",
            "the file is inconsistent: give the result the benchmark saved",
        )
    rate = d.get("request_rate", "inf")
    conc = d.get("max_concurrency")
    load: dict[str, Any] = {}
    if rate not in ("inf", None) and not (isinstance(rate, float) and math.isinf(rate)):
        load["request_rate_per_s"] = _number(path, "request_rate", rate)
    elif conc is not None:
        load["concurrency"] = int(_number(path, "max_concurrency", conc, integer=True))
    else:
        load["batch"] = int(completed)
    pct = {}
    for name, key in (
        ("ttft_p50_s", "median_ttft_ms"),
        ("ttft_p99_s", "p99_ttft_ms"),
        ("tpot_p50_s", "median_tpot_ms"),
        ("tpot_p99_s", "p99_tpot_ms"),
    ):
        if d.get(key) is not None:
            pct[name] = _number(path, key, d[key]) * MS
    tput = d.get("output_throughput")
    server = d.get("server_info")
    sglang = isinstance(server, dict) or str(d.get("backend", "")).startswith("sglang")
    tp = server.get("tp_size") if isinstance(server, dict) else None
    return ServingResult(
        file=path.name,
        format="sglang" if sglang else "vllm",
        label=_load_label(load),
        date=_iso_date(d.get("date")),
        input_tokens=max(1, round(inp)),
        output_tokens=round(out),
        ttft_s=_number(path, "mean_ttft_ms", d["mean_ttft_ms"]) * MS,
        tpot_s=_number(path, "mean_tpot_ms", d["mean_tpot_ms"]) * MS,
        output_tokens_per_s=_number(path, "output_throughput", tput) if tput is not None else None,
        percentiles=pct,
        prompt_set=_prompt_set(d.get("input_lens")),
        server_tp=int(_number(path, "server_info.tp_size", tp, integer=True)) if tp is not None else None,
        **load,
    )


def _prompt_set(lengths: Any) -> str | None:
    """The digest of a run's per-request prompt lengths (ServingResult.prompt_set); None when they are not listed
    or all equal."""
    if not isinstance(lengths, list) or len(set(map(str, lengths))) < 2:
        return None
    return hashlib.sha256(json.dumps(lengths).encode()).hexdigest()[:16]


def _load_label(load: dict[str, Any]) -> str:
    if "concurrency" in load:
        return f"concurrency {load['concurrency']}"
    if "request_rate_per_s" in load:
        return f"{load['request_rate_per_s']:g} requests/s"
    return f"batch {load['batch']}"


# -- GuideLLM --------------------------------------------------------------------------------------------------


def _dig(path: Path, d: Any, keys: tuple[str, ...], where: str) -> Any:
    cur = d
    for k in keys:
        if not isinstance(cur, dict) or k not in cur:
            raise _err(
                path,
                f"{where}.{'.'.join(keys)}",
                "(absent)",
                "a GuideLLM benchmark report holds it",
                "give the report `guidellm benchmark --output-path` wrote",
            )
        cur = cur[k]
    return cur


def _guidellm(path: Path, data: dict[str, Any]) -> list[ServingResult]:
    """A GuideLLM report's benchmarks as serving results. Long because GuideLLM's report moved its fields between
    versions (strategy under config or args, metrics nested by statistic); each case is a few lines."""
    out: list[ServingResult] = []
    benches = data["benchmarks"]
    if not benches:
        raise _err(path, "benchmarks", "[]", "the report holds no benchmark", "give a report of a finished run")
    for i, bm in enumerate(benches):
        where = f"benchmarks[{i}]"
        cfg = bm.get("config") if isinstance(bm, dict) else None
        strategy = (cfg or {}).get("strategy") if isinstance(cfg, dict) else None
        if strategy is None and isinstance(bm, dict):
            strategy = (bm.get("args") or {}).get("strategy")
        if not isinstance(strategy, dict):
            strategy = {}
        kind = strategy.get("type_")
        load: dict[str, Any]
        if kind == "synchronous":
            load = {"concurrency": 1}
        elif kind == "concurrent":
            load = {
                "concurrency": int(
                    _number(path, f"{where}.config.strategy.streams", strategy.get("streams"), integer=True)
                )
            }
        elif kind in ("constant", "poisson", "async"):
            load = {"request_rate_per_s": _number(path, f"{where}.config.strategy.rate", strategy.get("rate"))}
        else:
            raise _err(
                path,
                f"{where}.config.strategy.type_",
                kind,
                "has no fixed load to predict at (a throughput run sends as much as the server takes)",
                "calibrate with synchronous, concurrent, "
                "constant or poisson benchmarks (guidellm --profile concurrent --rate N ...)",
            )

        def stat(name: str, key: str = "mean", w: str = where, b: Any = bm) -> float:
            return _number(
                path, f"{w}.metrics.{name}.successful.{key}", _dig(path, b, ("metrics", name, "successful", key), w)
            )

        out_tokens = stat("output_token_count")
        if out_tokens < 2:
            raise _err(
                path,
                f"{where}.metrics.output_token_count.successful.mean",
                out_tokens,
                "fewer than 2 output tokens leave no inter-token time",
                "benchmark longer outputs",
            )
        pct: dict[str, float] = {}
        for name, metric in (("ttft", "time_to_first_token_ms"), ("tpot", "inter_token_latency_ms")):
            summary = bm["metrics"][metric]["successful"]
            if summary.get("median") is not None:
                pct[f"{name}_p50_s"] = (
                    _number(path, f"{where}.metrics.{metric}.successful.median", summary["median"]) * MS
                )
            p99 = (summary.get("percentiles") or {}).get("p99")
            if p99 is not None:
                pct[f"{name}_p99_s"] = _number(path, f"{where}.metrics.{metric}.successful.percentiles.p99", p99) * MS
        tput = None
        try:
            tput = stat("output_tokens_per_second")
        except SpecError:
            tput = None  # optional: older reports lack it
        out.append(
            ServingResult(
                file=path.name,
                format="guidellm",
                label=f"{where} {_load_label(load)}",
                date=_iso_date(
                    data.get("metadata", {}).get("date") if isinstance(data.get("metadata"), dict) else None
                ),
                input_tokens=max(1, round(stat("prompt_token_count"))),
                output_tokens=round(out_tokens),
                ttft_s=stat("time_to_first_token_ms") * MS,
                tpot_s=stat("inter_token_latency_ms") * MS,
                output_tokens_per_s=tput,
                percentiles=pct,
                **load,
            )
        )
    return out


# -- CSV -------------------------------------------------------------------------------------------------------

_PLAN_INT = ("tp", "pp", "dp", "cp", "ep", "vp", "microbatch_seqs")
_PLAN_STR = ("sharding", "recompute")
_JOB_INT = ("global_batch_seqs", "seq_len")


def _csv(path: Path, text: str) -> list[Result]:
    reader = csv.DictReader(io.StringIO(text))
    cols = [c.strip() for c in reader.fieldnames or []]
    rows = [{(k or "").strip(): (v or "").strip() for k, v in r.items()} for r in reader]
    if not rows:
        raise _err(path, "(rows)", "(none)", "the CSV has a header but no rows", "add one row per measured run")
    if "step_time_s" in cols:
        return [_training_row(path, i + 2, r) for i, r in enumerate(rows)]
    for need in ("input_tokens", "output_tokens", "ttft_s", "tpot_s"):
        if need not in cols:
            raise _err(
                path,
                need,
                "(absent)",
                "a serving CSV needs the column",
                "columns: input_tokens, output_tokens, concurrency or request_rate, ttft_s, tpot_s",
            )
    if "concurrency" not in cols and "request_rate" not in cols:
        raise _err(
            path,
            "concurrency",
            "(absent)",
            "a serving CSV says the load of each row",
            "add a concurrency (clients) or request_rate (requests/s) column",
        )
    return [_serving_row(path, i + 2, r) for i, r in enumerate(rows)]


def _csv_date(path: Path, line: int, r: dict[str, str]) -> str | None:
    """The row's optional ``date`` column as an ISO date."""
    if not r.get("date"):
        return None
    day = _iso_date(r["date"])
    if day is None:
        raise _err(path, f"line {line} date", r["date"], "not a date", "write it as YYYY-MM-DD")
    return day


def _serving_row(path: Path, line: int, r: dict[str, str]) -> ServingResult:
    def num(key: str, integer: bool = False) -> float:
        return _number(path, f"line {line} {key}", r.get(key, ""), integer=integer)

    conc, rate = r.get("concurrency", ""), r.get("request_rate", "")
    if bool(conc) == bool(rate):
        raise _err(
            path,
            f"line {line} concurrency",
            conc or "(empty)",
            "give exactly one of concurrency and request_rate per row",
            "fill one, leave the other empty",
        )
    load: dict[str, Any] = (
        {"concurrency": int(num("concurrency", True))} if conc else {"request_rate_per_s": num("request_rate")}
    )
    out = num("output_tokens", True)
    if out < 2:
        raise _err(
            path, f"line {line} output_tokens", out, "needs at least 2 output tokens", "benchmark longer outputs"
        )
    pct = {k: num(k) for k in ("ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s") if r.get(k)}
    return ServingResult(
        file=path.name,
        format="csv",
        label=f"line {line} {_load_label(load)}",
        date=_csv_date(path, line, r),
        input_tokens=int(num("input_tokens", True)),
        output_tokens=int(out),
        ttft_s=num("ttft_s"),
        tpot_s=num("tpot_s"),
        output_tokens_per_s=num("output_tokens_per_s") if r.get("output_tokens_per_s") else None,
        percentiles=pct,
        **load,
    )


def _training_row(path: Path, line: int, r: dict[str, str]) -> TrainingResult:
    plan: dict[str, Any] = {}
    for key in _PLAN_INT:
        if r.get(key):
            plan[key] = int(_number(path, f"line {line} {key}", r[key], integer=True))
    for key in _PLAN_STR:
        if r.get(key):
            plan[key] = r[key]
    if "tp" not in plan or "pp" not in plan:
        raise _err(
            path,
            f"line {line} tp",
            r.get("tp") or "(empty)",
            "a training CSV row names its layout",
            "fill tp and pp (and dp, cp, ep, microbatch_seqs where they differ from the scenario)",
        )
    job = {k: int(_number(path, f"line {line} {k}", r[k], integer=True)) for k in _JOB_INT if r.get(k)}
    return TrainingResult(
        file=path.name,
        format="training-csv",
        label=f"line {line}",
        date=_csv_date(path, line, r),
        plan=plan,
        job=job,
        step_time_s=_number(path, f"line {line} step_time_s", r.get("step_time_s", "")),
    )


# -- training logs ---------------------------------------------------------------------------------------------

_MEGATRON_ITER = re.compile(r"elapsed time per iteration \(ms\):\s*([0-9.eE+-]+)")
_MEGATRON_GBS = re.compile(r"global batch size:\s*(\d+)")
_TITAN_STEP = re.compile(r"step:\s*(\d+)\b.*?\btps:\s*([0-9,._]+)")


def _steady(path: Path, fld: str, values: list[float]) -> float:
    """Median of the logged values after the first (warm-up, compilation)."""
    if len(values) < 2:
        raise _err(
            path,
            fld,
            len(values),
            "needs at least 2 logged steps (the first is warm-up and left out)",
            "log more steps (--log-interval / --metrics.log_freq)",
        )
    return float(statistics.median(values[1:]))


def _megatron(path: Path, text: str) -> list[Result]:
    times = [_number(path, "elapsed time per iteration (ms)", v) for v in _MEGATRON_ITER.findall(text)]
    gbs = {int(v) for v in _MEGATRON_GBS.findall(text)}
    if len(gbs) > 1:
        raise _err(
            path,
            "global batch size",
            sorted(gbs),
            "changes during the log (batch-size ramp-up)",
            "give the part of the log after the ramp-up",
        )
    job = {"global_batch_seqs": gbs.pop()} if gbs else {}
    step = _steady(path, "elapsed time per iteration (ms)", times) * MS
    return [
        TrainingResult(
            file=path.name,
            format="megatron-log",
            label=f"{len(times) - 1} iterations",
            date=None,
            plan={},
            job=job,
            step_time_s=step,
        )
    ]


@dataclass(frozen=True, slots=True)
class TitanLog:
    """A torchtitan log's tokens per second per accelerator (its step time needs the scenario's batch)."""

    tokens_per_s_per_accelerator: float
    """torchtitan's ``tps``: tokens per second per accelerator (steady state)."""
    steps: int


def torchtitan_tps(path: Path, text: str) -> TitanLog:
    """The steady tokens per second per accelerator of a torchtitan log: the median of its logged ``tps`` after the
    first step; a SpecError naming the file with fewer than two logged steps."""
    tps = [_number(path, "tps", v.replace("_", "")) for _, v in _TITAN_STEP.findall(text)]
    return TitanLog(_steady(path, "tps", tps), len(tps) - 1)


def _torchtitan(path: Path, text: str) -> list[Result]:
    log = torchtitan_tps(path, text)
    tps = log.tokens_per_s_per_accelerator
    return [
        TrainingResult(
            file=path.name,
            format="torchtitan-log",
            label=f"{log.steps} logged steps",
            date=None,
            plan={},
            job={},
            step_time_s=None,
            tokens_per_s_per_accelerator=tps,
        )
    ]
