"""On-premise vs cloud total cost of ownership over time, and the breakeven month.

On-premise: capex (systems + network/storage share) paid at month 0; monthly opex = electricity
(IT power × utilisation × PUE × 730 h × $/kWh) + colocation ($/kW-month × facility kW) + staff +
maintenance (a fraction of capex per year). Straight-line depreciation over N years is reported.
Cloud: accelerator-hours × $/accelerator-hour; on-demand and spot are paid only for the hours used
(× utilisation), reserved capacity is paid whether used or not.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiinfra.cost.energy import HOURS_PER_MONTH


@dataclass(frozen=True, kw_only=True, slots=True)
class CloudLine:
    pricing: str
    source_id: str
    read_on: str
    age_days: int
    usd_per_accelerator_hour: float
    monthly_usd: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Tco:
    months: int
    capex_usd: float
    monthly_opex_usd: float
    opex_breakdown_usd_per_month: dict[str, float]
    depreciation_usd_per_month: float
    onprem_cumulative_usd: tuple[float, ...]
    cloud: tuple[CloudLine, ...]
    cloud_cumulative_usd: dict[str, tuple[float, ...]]
    breakeven_month: dict[str, int | None]
    """First month where cumulative on-prem cost ≤ cumulative cloud cost (None: not within the horizon)."""


def cumulative(start_usd: float, monthly_usd: float, months: int) -> tuple[float, ...]:
    return tuple(start_usd + monthly_usd * m for m in range(months + 1))


def breakeven(onprem: tuple[float, ...], cloud: tuple[float, ...]) -> int | None:
    for m, (a, b) in enumerate(zip(onprem, cloud, strict=True)):
        if m > 0 and a <= b:
            return m
    return None


def tco(months: int, capex_usd: float, opex: dict[str, float], cloud_lines: list[CloudLine], years: int) -> Tco:
    monthly = sum(opex.values())
    onprem = cumulative(capex_usd, monthly, months)
    cloud_cum = {c.pricing + ":" + c.source_id: cumulative(0.0, c.monthly_usd, months) for c in cloud_lines}
    return Tco(
        months=months, capex_usd=capex_usd, monthly_opex_usd=monthly, opex_breakdown_usd_per_month=opex,
        depreciation_usd_per_month=capex_usd / (years * 12), onprem_cumulative_usd=onprem, cloud=tuple(cloud_lines),
        cloud_cumulative_usd=cloud_cum, breakeven_month={k: breakeven(onprem, v) for k, v in cloud_cum.items()},
    )  # fmt: skip


def cloud_monthly_usd(usd_per_acc_hour: float, accelerators: int, pricing: str, utilisation_frac: float) -> float:
    hours = HOURS_PER_MONTH * (1.0 if pricing.startswith("reserved") else utilisation_frac)
    return usd_per_acc_hour * accelerators * hours
