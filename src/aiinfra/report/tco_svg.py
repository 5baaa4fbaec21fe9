"""SVG of cumulative on-prem vs cloud cost over time (hand-written SVG; formats a :class:`Tco`, computes nothing)."""

from __future__ import annotations

import math
from html import escape

from aiinfra.costing.tco import Tco

W, H = 760, 420
LEFT, RIGHT, TOP, BOTTOM = 80, 230, 40, 50
COLOURS = ("#222222", "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def _nice_step(span: float, ticks: int = 6) -> float:
    raw = span / ticks if span > 0 else 1.0
    mag = 10.0 ** math.floor(math.log10(raw))
    return float(next(m * mag for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * mag >= raw))


def _usd(v: float) -> str:
    if abs(v) >= 1e6:
        return f"${v / 1e6:,.3g}M"
    if abs(v) >= 1e3:
        return f"${v / 1e3:,.3g}k"
    return f"${v:,.0f}"


def tco_svg(t: Tco, title: str = "Cumulative cost: on-prem vs cloud") -> str:
    series: dict[str, tuple[float, ...]] = {"on-prem (capex + opex)": t.onprem_cumulative_usd}
    for line in t.cloud:
        series[f"cloud {line.pricing} ({line.provider})"] = t.cloud_cumulative_usd[line.pricing + ":" + line.source_id]
    y_max = max((max(v) for v in series.values()), default=1.0) or 1.0
    y_step = _nice_step(y_max)
    y_top = math.ceil(y_max / y_step) * y_step
    x_step = _nice_step(float(t.months), 8)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def sx(m: float) -> float:
        return LEFT + m / max(t.months, 1) * pw

    def sy(v: float) -> float:
        return TOP + ph - v / y_top * ph

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{W}" height="{H}" fill="white"/>',
        f'<text x="{LEFT + pw / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>',
    ]
    y = 0.0
    while y <= y_top + 1e-9:
        out.append(f'<line x1="{LEFT}" y1="{sy(y):.1f}" x2="{LEFT + pw}" y2="{sy(y):.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 6}" y="{sy(y) + 4:.1f}" text-anchor="end">{_usd(y)}</text>')
        y += y_step
    m = 0.0
    while m <= t.months + 1e-9:
        out.append(f'<line x1="{sx(m):.1f}" y1="{TOP + ph}" x2="{sx(m):.1f}" y2="{TOP + ph + 5}" stroke="black"/>')
        out.append(f'<text x="{sx(m):.1f}" y="{TOP + ph + 18}" text-anchor="middle">{m:g}</text>')
        m += x_step
    out += [
        f'<line x1="{LEFT}" y1="{TOP + ph}" x2="{LEFT + pw}" y2="{TOP + ph}" stroke="black"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + ph}" stroke="black"/>',
        f'<text x="{LEFT + pw / 2}" y="{H - 10}" text-anchor="middle">month</text>',
        f'<text x="16" y="{TOP + ph / 2}" transform="rotate(-90 16 {TOP + ph / 2})" text-anchor="middle">'
        "cumulative cost (USD)</text>",
    ]
    for i, (name, values) in enumerate(series.items()):
        c = COLOURS[i % len(COLOURS)]
        pts = " ".join(f"{sx(k):.1f},{sy(v):.1f}" for k, v in enumerate(values))
        width = 2.5 if i == 0 else 1.6
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="{width}" points="{pts}"/>')
        ly = TOP + 16 * (i + 1)
        out.append(
            f'<line x1="{W - RIGHT + 12}" y1="{ly - 4}" x2="{W - RIGHT + 32}" y2="{ly - 4}" stroke="{c}" '
            f'stroke-width="{width}"/>'
        )
        out.append(f'<text x="{W - RIGHT + 38}" y="{ly}" fill="{c}">{escape(name)}</text>')
    for i, line in enumerate(t.cloud, start=1):
        be = t.breakeven_month.get(line.pricing + ":" + line.source_id)
        if be is None:
            continue
        c = COLOURS[i % len(COLOURS)]
        v = t.onprem_cumulative_usd[be]
        out.append(f'<circle cx="{sx(be):.1f}" cy="{sy(v):.1f}" r="4" fill="{c}"/>')
        out.append(f'<text x="{sx(be) + 6:.1f}" y="{sy(v) - 6:.1f}" fill="{c}" font-size="11">month {be}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
