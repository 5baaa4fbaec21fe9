"""Bounds on every numeric input, declared once on the spec fields and enforced by the one validation pass.

A field is annotated ``Annotated[int, InRange(1, MAX_ACCELERATORS)]``: the value must be a plain number (not
true/false), finite, and inside the range; the error names the range. Each upper bound is a named constant
whose docstring says why no real input is larger. Limits that only keep the work bounded say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

if TYPE_CHECKING:  # pydantic loads only when input is validated (specs.common.validate)
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import core_schema

MAX_ACCELERATORS = 10**7
"""Accelerators in one job or fleet: larger than any cluster built (the largest announced hold a few hundred
thousand GPUs)."""
MAX_PER_NODE = 1024
"""Accelerators per node or scale-up domain: 14× the largest in the catalog (NVL72, 72 GPUs)."""
MAX_SEQ_TOKENS = 10**8
"""Tokens in one sequence: 10× the longest context any model supports (Llama 4 Scout, 10 M tokens)."""
MAX_TOKENS = 1e18
"""Tokens trained or processed in a run: about 60× what Google reported serving in a year (1.3 × 10¹⁵ tokens a
month, 2025) and 10⁴× the largest published training run (36 × 10¹² tokens)."""
MAX_BATCH_SEQS = 10**7
"""Sequences in one batch or optimizer step: 600× the largest published global batch (DeepSeek-V3, 15,360)."""
MAX_BATCH_TOKENS = 10**9
"""Tokens in one scheduler iteration: 10× the longest sequence allowed (MAX_SEQ_TOKENS)."""
MAX_BYTES_PER_TOKEN = 1e6
"""Training-data bytes per token: a megabyte, above any multimodal token's raw data (an image patch is kilobytes)."""
MAX_SIMULATED_REQUESTS = 10**7
"""Work budget of one simulation: 10⁷ requests run in minutes; more is refused rather than left to run for hours."""
MAX_SIMULATED_REPLICAS = 10**4
"""Work budget of one simulation: replicas each hold their own scheduler state; 10⁴ is beyond any serving
deployment simulated per replica."""
MAX_SCHEDULE_JOBS = 10**6
"""Work budget of one cluster-scheduling run (generated jobs, backfill depth, users): the simulator takes about
0.5 ms and 1 kB a job (100,000 generated jobs: 48 s, 122 MB peak on this project's 2-core CI machine), so 10⁶ jobs
take minutes and about a GB; more is refused rather than left to run for an hour."""
MAX_CLUSTER_NODES = 10**5
"""Nodes of a scheduled cluster: 800,000 GPUs at 8 per node, above the largest clusters announced (a few hundred
thousand GPUs; see MAX_ACCELERATORS); the scheduler keeps per-node state, so this also bounds its memory."""
MAX_UTILISATION_BINS = 10_000
"""Points of a utilisation-over-time series: more than a chart's pixels across; each costs a pass over the
busy intervals."""
MAX_PACK_COPIES = 10**5
"""Copies of one packed workload (notebooks, fine-tunes): 14,000 GPUs' worth at seven MIG instances each; the
packer holds every copy as an item."""
WEB_MAX_SCHEDULE_JOBS = 50_000
"""Generated jobs one schedule from the web app may run: about 25 s on the 2-core CI machine (0.5 ms a job,
MAX_SCHEDULE_JOBS), within the server's 120 s wall-time limit for every policy; the CLI runs up to
MAX_SCHEDULE_JOBS."""
WEB_MAX_SIMULATED_REQUESTS = 20_000
"""Requests one simulation from the web app may run: examples/simulate-llama70b-h100.yaml at 20,000 requests
simulates in 1.1 s on the 2-core CI machine (bench/README.md, simulator section, for rates); the CLI runs up to
MAX_SIMULATED_REQUESTS."""
MAX_WIDTH = 10**6
"""Hidden, FFN and head widths of a model: 50× the widest published (PaLM 540B, hidden 18,432)."""
MAX_LAYERS = 10**4
"""Layers of a model: 40× the deepest published decoder (GPT-3-class and Llama 405B: 96 and 126)."""
MAX_HEADS = 10**5
"""Attention heads: 700× the most published (DeepSeek-V3, 128)."""
MAX_VOCAB = 10**8
"""Vocabulary rows: 300× the largest published vocabularies (Gemma 3, 262,144)."""
MAX_EXPERTS = 10**5
"""Routed experts: 200× the most published (Kimi K2: 384)."""
MAX_SECONDS = 100 * 365.25 * 86400.0
"""Durations, latencies, ramps and restarts: a century, longer than any run or facility lasts."""
MAX_RATE_PER_S = 1e7
"""Requests per second: above any published API load (a few 10⁵ requests/s at the largest providers)."""
MAX_USERS = 10**9
"""Concurrent users: an eighth of the world's population at once."""
MAX_USD = 1e12
"""Any one price or capex figure in US dollars: above the total planned capex of the largest AI build-out
announced (Stargate, $500 B)."""
MAX_BYTES = 1e21
"""Bytes of a dataset, checkpoint or egress: a zettabyte, above the data stored by any one provider."""
MAX_POWER_W = 1e7
"""Watts of one node, rack or switch: 10 MW, 15× the densest rack announced (600 kW)."""
PUE_MAX = 3.0
"""Power usage effectiveness: 1 means every watt reaches IT load; surveys find no site above about 2.5 (Uptime
Institute 2023 average 1.58), so 3 is above any facility measured."""
MAX_YEARS = 100
"""Depreciation years: a century, longer than any asset schedule."""
MAX_MONTHS = 1200
"""TCO horizon in months: a century (the cost curve is computed month by month, so this also bounds the work)."""
MAX_INTERRUPTIONS_PER_HOUR = 3600.0
"""Spot interruptions per instance-hour: one a second; above that no work is done at all."""
MAX_COUNT = 10**6
"""Counts with no physical scale of their own (checkpoints kept, plans shown, draft tokens, switch radix, ports):
far above any real setting."""
MAX_RATIO = 100.0
"""Dimensionless ratios (oversubscription, coefficient of variation): a 1:100 leaf or a CV of 100 is no longer a
fabric or a request stream."""
MAX_LOG_SIGMA = 4.0
"""σ of log(length) in a lognormal length distribution: published traces measure 0.5–1.5 (ShareGPT, LMSYS);
σ = 4 already spans nine orders of magnitude at ±2.5σ."""
MAX_LENGTH_QUANTILES = 1001
"""Points of an empirical length distribution's quantile table: every 0.1 % of the probability, far finer than a
published dataset's length statistics need (the catalog's ShareGPT table has 51)."""


def _num(x: float) -> str:
    if isinstance(x, int) or float(x).is_integer():
        return f"{int(x):,}" if abs(x) < 1e16 else f"{x:.0e}"
    return f"{x:g}"


@dataclass(frozen=True, slots=True)
class InRange:
    """Pydantic metadata: a plain finite number with ``lo ≤ value ≤ hi`` (``lo < value`` when ``lo_open``)."""

    lo: float
    hi: float
    lo_open: bool = False

    @property
    def text(self) -> str:
        """The range in words for error messages, e.g. "> 0 and ≤ 1,000,000"."""
        low = f"> {_num(self.lo)}" if self.lo_open else f"≥ {_num(self.lo)}"
        return f"{low} and ≤ {_num(self.hi)}"

    def _check(self, value: Any) -> Any:
        if isinstance(value, bool):
            raise _custom_error("bool_not_number", "expected a number, not true/false", {"range": self.text})
        if not isinstance(value, int | float):
            return value  # not a number yet: the type's own parsing judges it, then this check runs again
        try:
            x = float(value)
        except OverflowError:  # an int beyond float range
            x = math.copysign(math.inf, value)
        if math.isnan(x) or (math.isinf(x) and isinstance(value, float)):
            raise _custom_error("not_finite", "must be a finite number", {"range": self.text})
        if x > self.hi or x < self.lo or (self.lo_open and x == self.lo):
            raise _custom_error("out_of_range", "out of range", {"range": self.text})
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """Checked before conversion (so 1e30 in an integer field is out of range, not an overflow) and after
        (for a value the type parsed from text)."""
        from pydantic_core import core_schema

        inner = core_schema.no_info_after_validator_function(self._check, handler(source))
        return core_schema.no_info_before_validator_function(self._check, inner)


class Constraint:
    """Pydantic metadata standing for one ``annotated_types`` constraint: ``Constraint("Interval", gt=0.0, le=1.0)``
    validates as ``annotated_types.Interval(gt=0.0, le=1.0)`` does (pydantic is handed that very marker when it
    builds a validator: the same schema and the same errors), without importing annotated_types and
    typing_extensions when the specs are imported (start-up time; a warm run builds no validator)."""

    __slots__ = ("args", "kwargs", "name")

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __repr__(self) -> str:
        given = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return f"{self.name}({', '.join(given)})"

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """The schema of ``Annotated[source, annotated_types.<name>(*args, **kwargs)]``."""
        import annotated_types

        return handler(Annotated[source, getattr(annotated_types, self.name)(*self.args, **self.kwargs)])


# the bounded types the specs use most
Accelerators = Annotated[int, InRange(1, MAX_ACCELERATORS)]
PerNode = Annotated[int, InRange(1, MAX_PER_NODE)]
SeqTokens = Annotated[int, InRange(1, MAX_SEQ_TOKENS)]
Tokens = Annotated[float, InRange(0, MAX_TOKENS, lo_open=True)]
BatchSeqs = Annotated[int, InRange(1, MAX_BATCH_SEQS)]
Seconds = Annotated[float, InRange(0, MAX_SECONDS, lo_open=True)]
SecondsOrZero = Annotated[float, InRange(0, MAX_SECONDS)]
Fraction = Annotated[float, InRange(0, 1, lo_open=True)]
"""In (0, 1]."""
FractionOrZero = Annotated[float, InRange(0, 1)]
"""In [0, 1]."""
Usd = Annotated[float, InRange(0, MAX_USD)]
UsdPositive = Annotated[float, InRange(0, MAX_USD, lo_open=True)]
Bytes = Annotated[float, InRange(0, MAX_BYTES)]
BytesPositive = Annotated[float, InRange(0, MAX_BYTES, lo_open=True)]
Watts = Annotated[float, InRange(0, MAX_POWER_W)]
Pue = Annotated[float, InRange(1, PUE_MAX)]
Count = Annotated[int, InRange(1, MAX_COUNT)]
Ratio = Annotated[float, InRange(0, MAX_RATIO, lo_open=True)]
Oversubscription = Annotated[float, InRange(1, MAX_RATIO)]
"""A leaf's down:up port ratio: 1 = non-blocking, never below."""
RatePerS = Annotated[float, InRange(0, MAX_RATE_PER_S, lo_open=True)]
Width = Annotated[int, InRange(1, MAX_WIDTH)]


def _custom_error(kind: str, message: str, context: dict[str, Any]) -> Exception:
    """pydantic-core's error for a failed bound (imported here: only validation reaches it)."""
    from pydantic_core import PydanticCustomError

    return PydanticCustomError(kind, message, context)
